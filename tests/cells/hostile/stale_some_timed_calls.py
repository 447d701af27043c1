"""Hostile: right while it is checked; when timed, every other call returns the call before's output (stale), so only
some of a batch's timed calls are wrong."""
import inspect

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


_calls, _last = [0], {}


def run(x, y):
    timed = any(frame.function == "time" for frame in inspect.stack())
    _calls[0] += 1
    if timed and _calls[0] % 2 == 0 and x.shape in _last:
        return _last[x.shape].clone()
    out = torch.empty_like(x)
    add_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, out, x.numel(), BLOCK=1024)
    _last[x.shape] = out.clone()
    return out
