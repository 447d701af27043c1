"""Hostile: slows every clock it can find (time.perf_counter, CUDA events, the judge's own copies) so that
it looks fast; it does the work, slowly."""
import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


def add(x, y, block=1024):
    out = torch.empty_like(x)
    add_kernel[(triton.cdiv(x.numel(), block),)](x, y, out, x.numel(), BLOCK=block)
    return out


import sys
import time

_real = time.perf_counter
_start = _real()


def slow_clock():
    return _start + (_real() - _start) / 1000  # a millisecond becomes a microsecond


time.perf_counter = slow_clock
torch.cuda.Event.elapsed_time = lambda self, end: 1e-6
for name, module in list(sys.modules.items()):
    if name.startswith("kernel_lab.verify") or name == "__main__":
        if hasattr(module, "_perf"):
            module._perf = slow_clock
        if hasattr(module, "_elapsed"):
            module._elapsed = lambda start, end: 1e-6


def run(x, y):
    time.sleep(0.02)
    return add(x, y)
