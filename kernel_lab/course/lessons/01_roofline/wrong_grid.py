# Lesson 1, wrong: bigger blocks, but the grid was not updated (n // 2048 programs miss the tail).
import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"  # no GPU: Triton's CPU interpreter


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


N = 2**25 if DEVICE == "cuda" else 10_000
SHAPES = [(N,), (1_000_003,) if DEVICE == "cuda" else (4_097,)]


def make_inputs(n=N):
    return torch.randn(n, device=DEVICE), torch.randn(n, device=DEVICE)


def run(x, y):
    out = torch.empty_like(x)
    n = x.numel()
    add_kernel[(n // 2048,)](x, y, out, n, BLOCK=2048, num_warps=8)
    return out
