"""Hostile: looks for the reference in its own process (through the garbage collector) to call its run."""
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


import gc


def run(x, y):
    for thing in gc.get_objects():
        if isinstance(thing, dict) and thing.get("__name__") == "kernel_lab_reference" and callable(thing.get("run")):
            return thing["run"](x, y)
    raise RuntimeError("no reference to steal")
