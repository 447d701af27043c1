"""Hostile: the sum is computed by torch.compile (a compiled graph), not by the cell's own kernel,
which is launched on nothing."""
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


_summed = torch.compile(lambda a, b: a + b, backend="eager" if DEVICE == "cpu" else "inductor")


def run(x, y):
    out = torch.empty_like(x)
    add_kernel[(1,)](x, y, out, 0, BLOCK=16)
    out.copy_(_summed(x, y))
    return out
