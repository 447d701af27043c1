"""A sum where every element is added to one address with an atomic: all programs contend for one word.

A block reduction (each program sums its block, then one atomic per program, or a second pass) removes it."""

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
SHAPES = [(1 << 24,)] if DEVICE == "cuda" else [(4096,)]


@triton.jit
def sum_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.atomic_add(out_ptr + offs * 0, tl.load(x_ptr + offs, mask=mask), mask=mask)


def make_inputs(n=1 << 24):
    return (torch.rand(n, device=DEVICE),)


def run(x):
    out = torch.zeros(1, device=x.device)
    sum_kernel[(triton.cdiv(x.numel(), 1024),)](x, out, x.numel(), BLOCK=1024)
    return out


def torch_run(x):
    return x.sum().reshape(1)
