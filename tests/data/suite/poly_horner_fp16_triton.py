"""Planted bottleneck: compute bound (half-precision FMA), an FMA-heavy loop with no matrix in it.

Each fp16 element is read once and written once (4 bytes) and in between goes through a
degree-256 Horner recurrence in fp16: 256 multiply-adds, ~128 FLOP per byte. Triton packs pairs
of halves into HFMA2 instructions on the FMA pipe, which is the busy unit; memory is nearly idle.
This is also a near miss for tensor_cores_unused: it is fp16 and FMA-bound, but there is no
matrix product to hand to the tensor cores. Faster means fewer operations per element.
"""
import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
N = 2**24
DEGREE = 256


@triton.jit
def poly_fp16_kernel(x_ptr, out_ptr, n, DEGREE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    acc = tl.zeros_like(x)
    c = tl.full(x.shape, 0.5, tl.float16)
    for _ in range(DEGREE):
        acc = acc * x + c  # fp16 multiply-add
    tl.store(out_ptr + offs, acc, mask=mask)


def make_inputs():
    torch.manual_seed(0)
    x = (torch.rand(N, device=DEVICE) * 1.6 - 0.8).half()  # |x| <= 0.8: the recurrence contracts
    return (x,)


def run(x):
    out = torch.empty_like(x)
    poly_fp16_kernel[(triton.cdiv(x.numel(), 1024),)](x, out, x.numel(), DEGREE=DEGREE, BLOCK=1024, num_warps=4)
    return out


def reference(x):
    acc = torch.zeros_like(x, dtype=torch.float32)
    xf = x.float()
    for _ in range(DEGREE):
        acc = acc * xf + 0.5
    return acc.half()  # fp32 reference: the fp16 recurrence differs by rounding only
