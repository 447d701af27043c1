"""An elementwise chain as two kernels: add a bias, then GELU (tanh form).

The intermediate tensor is written by the first kernel and read back by the second; fused, it stays on chip."""

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
SHAPES = [(8192, 8192)] if DEVICE == "cuda" else [(16, 64)]


@triton.jit
def bias_kernel(x_ptr, b_ptr, out_ptr, n, n_cols, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(b_ptr + offs % n_cols, mask=mask), mask=mask)


@triton.jit
def gelu_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    inner = 0.7978845608 * (x + 0.044715 * x * x * x)
    tanh = 2 * tl.sigmoid(2 * inner) - 1
    tl.store(out_ptr + offs, 0.5 * x * (1 + tanh), mask=mask)


def make_inputs(rows=8192, cols=8192):
    return torch.randn(rows, cols, device=DEVICE), torch.randn(cols, device=DEVICE)


def run(x, b):
    n = x.numel()
    biased = torch.empty_like(x)
    out = torch.empty_like(x)
    bias_kernel[(triton.cdiv(n, 1024),)](x, b, biased, n, x.shape[1], BLOCK=1024)
    gelu_kernel[(triton.cdiv(n, 1024),)](biased, out, n, BLOCK=1024)
    return out


def torch_run(x, b):
    return torch.nn.functional.gelu(x + b, approximate="tanh")
