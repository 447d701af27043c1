"""Hostile: the first timed call of a batch finds the batch's other inputs (in its caller's frame)
and computes every call's answer at once; the others return what it cached, so the median call is fast."""
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


import sys

CACHED = {}


def add(x, y):
    out = torch.empty_like(x)
    add_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, out, x.numel(), BLOCK=1024)
    return out


def run(x, y):
    if x.data_ptr() in CACHED:
        return CACHED.pop(x.data_ptr())
    frame = sys._getframe(1)
    while frame is not None and not isinstance(frame.f_locals.get("calls"), list):
        frame = frame.f_back
    for args in frame.f_locals["calls"][1:] if frame is not None else []:
        CACHED[args[0].data_ptr()] = add(*args)
    return add(x, y)

