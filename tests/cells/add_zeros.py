"""Wrong: returns zeros (and its own make_inputs, which the judge ignores, would make that look right)."""
import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
N = 20_000


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


def make_inputs():  # ignored by the judge: a candidate may not choose its inputs
    x = torch.randn(N, device=DEVICE)
    return x, -x


def run(x, y):
    return torch.zeros_like(x)
