# Lesson 7, example: the same split, with the partial sums added by atomics instead of a second kernel.
import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"  # no GPU: Triton's CPU interpreter
SPLIT = 64  # programs per row


@triton.jit
def partial_sum_kernel(x_ptr, out_ptr, C, CHUNK, BLOCK: tl.constexpr):
    row, s = tl.program_id(0), tl.program_id(1)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(s * CHUNK, tl.minimum(s * CHUNK + CHUNK, C), BLOCK):
        cols = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + row * C + cols, mask=cols < C, other=0.0)
    tl.atomic_add(out_ptr + row, tl.sum(acc, axis=0))  # the order of the adds varies from run to run


R, C = (64, 2**21) if DEVICE == "cuda" else (5, 3000)
SHAPES = [(R, C), (7, 100_003) if DEVICE == "cuda" else (3, 1001)]


def make_inputs(r=R, c=C):
    return (torch.randn(r, c, device=DEVICE),)


def run(x):
    r, c = x.shape
    block = 4096 if x.is_cuda else 256
    chunk = triton.cdiv(triton.cdiv(c, SPLIT), block) * block  # a whole number of blocks per program
    out = torch.zeros(r, device=x.device)
    partial_sum_kernel[(r, SPLIT)](x, out, c, chunk, BLOCK=block, num_warps=8)
    return out
