# Lesson 7, reference: split each row into SPLIT chunks (R x SPLIT programs), then a second pass adds the partial sums.
import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"  # no GPU: Triton's CPU interpreter
SPLIT = 64  # programs per row


@triton.jit
def partial_sum_kernel(x_ptr, part_ptr, C, CHUNK, SPLIT: tl.constexpr, BLOCK: tl.constexpr):
    row, s = tl.program_id(0), tl.program_id(1)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(s * CHUNK, tl.minimum(s * CHUNK + CHUNK, C), BLOCK):
        cols = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + row * C + cols, mask=cols < C, other=0.0)
    tl.store(part_ptr + row * SPLIT + s, tl.sum(acc, axis=0))


@triton.jit
def finish_kernel(part_ptr, out_ptr, SPLIT: tl.constexpr):
    row = tl.program_id(0)
    tl.store(out_ptr + row, tl.sum(tl.load(part_ptr + row * SPLIT + tl.arange(0, SPLIT)), axis=0))


R, C = (64, 2**21) if DEVICE == "cuda" else (5, 3000)
SHAPES = [(R, C), (7, 100_003) if DEVICE == "cuda" else (3, 1001)]


def make_inputs(r=R, c=C):
    return (torch.randn(r, c, device=DEVICE),)


def run(x):
    r, c = x.shape
    block = 4096 if x.is_cuda else 32
    out = torch.empty(r, device=x.device)
    if c < SPLIT * block:  # a short row: one program per row, one launch (a second launch costs more than it saves)
        partial_sum_kernel[(r, 1)](x, out, c, triton.cdiv(c, block) * block, SPLIT=1, BLOCK=block, num_warps=8)
        return out
    chunk = triton.cdiv(triton.cdiv(c, SPLIT), block) * block  # a whole number of blocks per program
    part = torch.empty(r, SPLIT, device=x.device)
    partial_sum_kernel[(r, SPLIT)](x, part, c, chunk, SPLIT=SPLIT, BLOCK=block, num_warps=8)
    finish_kernel[(r,)](part, out, SPLIT=SPLIT)
    return out
