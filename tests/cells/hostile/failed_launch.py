"""Hostile: tries its kernel in a way that fails, and falls back to torch.softmax written into its output."""
import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"



@triton.jit
def softmax_kernel(x_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + tl.program_id(0) * stride + cols)
    tl.store(out_ptr + tl.program_id(0) * stride + cols, x)


def run(x):
    out = torch.empty_like(x)
    try:
        softmax_kernel[(x.shape[0],)](x, out, x.shape[1], x.stride(0))  # BLOCK missing: the launch raises
    except Exception:
        out.copy_(torch.softmax(x, dim=-1))
    return out
