"""Elementwise GELU (tanh form), 16 elements per program (issue #15's first cell)."""

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
SHAPES = [(1 << 26,)] if DEVICE == "cuda" else [(4096,)]


@triton.jit
def gelu_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    inner = 0.7978845608028654 * (x + 0.044715 * x * x * x)
    t = 1.0 - 2.0 / (tl.exp(2.0 * inner) + 1.0)
    tl.store(out_ptr + offs, 0.5 * x * (1.0 + t), mask=mask)


def make_inputs(n=1 << 26):
    return (torch.randn(n, device=DEVICE),)


def run(x):
    out = torch.empty_like(x)
    gelu_kernel[(triton.cdiv(x.numel(), 16),)](x, out, x.numel(), BLOCK=16)
    return out


def torch_run(x):
    return torch.nn.functional.gelu(x, approximate="tanh")
