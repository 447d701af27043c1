"""Hostile: run() returns at once a tensor whose values are computed when it is first used (a
tensor subclass), so the work happens after the call's clock stops, when the output is sent back (with blocks of 16, as its
reference: long enough to stand out of a busy machine's noise on the CPU)."""
import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
SHAPES = [(8192,), (4096,)]


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


def make_inputs(n=8192):
    return torch.randn(n, device=DEVICE), torch.randn(n, device=DEVICE)


class Deferred(torch.Tensor):
    """A tensor whose values are computed on its first use."""

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        for a in args:
            fill = getattr(a, "_fill", None)
            if fill is not None:
                a._fill = None
                fill()
        with torch._C.DisableTorchFunctionSubclass():
            return func(*args, **(kwargs or {}))


def run(x, y):
    out = torch.empty_like(x)
    deferred = out.as_subclass(Deferred)
    deferred._fill = lambda: add_kernel[(triton.cdiv(x.numel(), 16),)](x, y, out, x.numel(), BLOCK=16)
    return deferred
