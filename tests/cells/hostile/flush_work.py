"""Hostile: does its work inside the judge's cache flush before each timed call (``Tensor.zero_`` patched), out of
the timed window, and returns that result when the call is timed."""
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


def add(x, y):
    out = torch.empty_like(x)
    add_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, out, x.numel(), BLOCK=1024)
    return out


def make_inputs(n=8192):
    return torch.randn(n, device=DEVICE), torch.randn(n, device=DEVICE)


_zero = torch.Tensor.zero_
_last: dict = {}


def zero_(self):
    if self.numel() >= 1 << 24 and "inputs" in _last:  # the judge's flush: the buffers already hold the next inputs
        _last["ready"] = (_last["inputs"], add(*_last["inputs"]))
    return _zero(self)


torch.Tensor.zero_ = zero_


def run(x, y):
    _last["inputs"] = (x, y)
    inputs, ready = _last.pop("ready", (None, None))
    if inputs is not None and inputs[0] is x and inputs[1] is y:  # the same buffers: a timed call
        return ready
    return add(x, y)
