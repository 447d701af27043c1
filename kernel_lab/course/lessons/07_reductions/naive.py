# Lesson 7, naive: row sums of a wide matrix, one program per row (64 programs for 132 SMs).
import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"  # no GPU: Triton's CPU interpreter


@triton.jit
def row_sum_kernel(x_ptr, out_ptr, C, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, C, BLOCK):  # the whole row, one BLOCK at a time
        cols = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + row * C + cols, mask=cols < C, other=0.0)
    tl.store(out_ptr + row, tl.sum(acc, axis=0))


R, C = (64, 2**21) if DEVICE == "cuda" else (5, 3000)
SHAPES = [(R, C), (7, 100_003) if DEVICE == "cuda" else (3, 1001)]


def make_inputs(r=R, c=C):
    return (torch.randn(r, c, device=DEVICE),)


def run(x):
    r, c = x.shape
    out = torch.empty(r, device=x.device)
    row_sum_kernel[(r,)](x, out, c, BLOCK=4096, num_warps=8)
    return out
