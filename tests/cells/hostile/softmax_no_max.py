"""Sloppy: softmax without subtracting the row maximum (exp overflows for inputs above ~88)."""
import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"



@triton.jit
def softmax_kernel(x_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    offs = tl.program_id(0) * stride + cols
    e = tl.exp(tl.load(x_ptr + offs, mask=mask, other=-float("inf")))
    tl.store(out_ptr + offs, e / tl.sum(e, axis=0), mask=mask)


def run(x):
    out = torch.empty_like(x)
    softmax_kernel[(x.shape[0],)](x, out, x.shape[1], x.stride(0), BLOCK=triton.next_power_of_2(x.shape[1]))
    return out
