# Lesson 9, reference: the row is loaded once into registers (BLOCK >= N), 8 warps per row.
import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"  # no GPU: Triton's CPU interpreter


@triton.jit
def layernorm_kernel(x_ptr, out_ptr, N, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * N + cols, mask=cols < N, other=0.0)
    mean = tl.sum(x, axis=0) / N
    d = tl.where(cols < N, x - mean, 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(d * d, axis=0) / N + eps)
    tl.store(out_ptr + row * N + cols, d * rstd, mask=cols < N)


M, N = (16384, 4096) if DEVICE == "cuda" else (19, 300)
SHAPES = [(M, N), (1000, 1000), (999, 33)] if DEVICE == "cuda" else [(M, N), (5, 33)]


def make_inputs(m=M, n=N):
    return (torch.randn(m, n, device=DEVICE),)


def run(x):
    m, n = x.shape
    out = torch.empty_like(x)
    layernorm_kernel[(m,)](x, out, n, 1e-5, BLOCK=triton.next_power_of_2(n), num_warps=8)
    return out
