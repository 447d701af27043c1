# Lesson 1, example: out = a * x + y, 1024 elements per program (a memory-bound kernel).
import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


@triton.jit
def axpy_kernel(a, x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, a * x + y, mask=mask)


N = 2**25 if DEVICE == "cuda" else 10_000


def make_inputs(n=N):
    return torch.randn(n, device=DEVICE), torch.randn(n, device=DEVICE)


def run(x, y):
    out = torch.empty_like(x)
    n = x.numel()
    axpy_kernel[(triton.cdiv(n, 1024),)](2.0, x, y, out, n, BLOCK=1024)
    return out
