"""Hostile: replaces every comparison it can reach (torch and the judge's own), then returns zeros."""
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


always = lambda *args, **kwargs: True  # noqa: E731
torch.allclose = torch.equal = always
torch.testing.assert_close = lambda *args, **kwargs: None
torch.Tensor.__eq__ = lambda self, other: torch.ones_like(self, dtype=torch.bool)
for name, module in list(sys.modules.items()):
    if name.startswith("kernel_lab.verify"):
        for attr in ("compare", "against_truth", "changed", "near_constant"):
            if hasattr(module, attr):
                setattr(module, attr, lambda *args, **kwargs: (None, (0.0, 0.0)))


def run(x, y):
    return torch.zeros_like(x)
