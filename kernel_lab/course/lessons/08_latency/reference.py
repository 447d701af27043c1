# Lesson 8, reference: wide steps, a running vector of products, one reduction at the end.
import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"  # no GPU: Triton's CPU interpreter


@triton.jit
def gemv_kernel(a_ptr, x_ptr, y_ptr, K, BLOCK_K: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros((BLOCK_K,), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        cols = k + tl.arange(0, BLOCK_K)
        a = tl.load(a_ptr + row * K + cols, mask=cols < K, other=0.0)
        x = tl.load(x_ptr + cols, mask=cols < K, other=0.0)
        acc += a * x  # no reduction in the loop: the next loads need not wait for this one
    tl.store(y_ptr + row, tl.sum(acc, axis=0))


M, K = (16384, 4096) if DEVICE == "cuda" else (33, 500)
SHAPES = [(M, K), (1000, 3001) if DEVICE == "cuda" else (7, 129)]


def make_inputs(m=M, k=K):
    return torch.randn(m, k, device=DEVICE), torch.randn(k, device=DEVICE)


def run(a, x):
    m, k = a.shape
    y = torch.empty(m, device=a.device)
    gemv_kernel[(m,)](a, x, y, k, BLOCK_K=1024, num_warps=4, num_stages=3)
    return y
