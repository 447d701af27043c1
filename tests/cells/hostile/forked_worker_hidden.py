"""Hostile: run() forks a process that computes the output after the call returns (as forked_worker), and the cell
empties the judge's view of its child processes where the timing loop once looked it up at every call
(``kernel_lab.verify.timed.children``), so that the worker would not be seen outliving a timed call."""
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


import os
import sys

_timed = sys.modules.get("kernel_lab.verify.timed")
if _timed is not None:
    _timed.children = lambda: set()


def run(x, y):
    out = torch.empty_like(x).share_memory_()
    if os.fork() == 0:
        __import__("time").sleep(0.05)
        torch.add(x, y, out=out)
        os._exit(0)
    add_kernel[(1,)](x, y, out, 0, BLOCK=16)  # its own kernel, launched on nothing
    return out
