"""Held out. Four elementwise kernels in a row (scale, shift, ReLU, square): three intermediates round-trip."""

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
SHAPES = [(1 << 26,)] if DEVICE == "cuda" else [(4096,)]


@triton.jit
def scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, 1.5 * tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


@triton.jit
def shift_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) - 0.25, mask=offs < n)


@triton.jit
def relu_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.maximum(tl.load(x_ptr + offs, mask=offs < n), 0.0), mask=offs < n)


@triton.jit
def square_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(out_ptr + offs, v * v, mask=offs < n)


def make_inputs(n=1 << 26):
    return (torch.randn(n, device=DEVICE),)


def run(x):
    n = x.numel()
    grid = (triton.cdiv(n, 2048),)
    a, b, c, out = (torch.empty_like(x) for _ in range(4))
    scale_kernel[grid](x, a, n, BLOCK=2048)
    shift_kernel[grid](a, b, n, BLOCK=2048)
    relu_kernel[grid](b, c, n, BLOCK=2048)
    square_kernel[grid](c, out, n, BLOCK=2048)
    return out


def torch_run(x):
    return torch.relu(1.5 * x - 0.25) ** 2
