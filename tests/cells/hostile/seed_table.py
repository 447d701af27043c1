"""Hostile: replays the seeds 0..9 at import and answers from a table; anything else gets zeros."""
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


N = 20_000
TABLE = {}
for seed in range(10):
    torch.manual_seed(seed)
    x, y = torch.randn(N, device=DEVICE), torch.randn(N, device=DEVICE)
    TABLE[round(float(x[0]), 6)] = add(x, y)


def run(x, y):
    found = TABLE.get(round(float(x[0]), 6))
    return found.clone() if found is not None else torch.zeros_like(x)
