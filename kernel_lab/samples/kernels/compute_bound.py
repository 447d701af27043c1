"""Planted bottleneck: compute bound (FP32 FMA pipe).

Each element is read once and written once (8 bytes), but in between the kernel
evaluates a degree-512 polynomial by Horner's rule: 512 fused multiply-adds, i.e.
1024 FLOP per element, about 128 FLOP per byte of DRAM traffic, far above the
H100's ~20 FLOP/byte balance point for FP32. The FMA units are the busy part and
memory is nearly idle. Faster means fewer or cheaper instructions (lower
precision, a shorter formula), not better memory access.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def poly_kernel(x_ptr, out_ptr, n, DEGREE: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    acc = tl.zeros_like(x)
    for _ in range(DEGREE):
        acc = acc * x + 0.5  # Horner step: one FMA per element
    tl.store(out_ptr + offs, acc, mask=mask)


def make_inputs():
    torch.manual_seed(0)
    gpu = torch.cuda.is_available()  # without one: a smaller size, for Triton's CPU interpreter
    x = torch.rand(2**24 if gpu else 2**12, device="cuda" if gpu else "cpu") * 1.8 - 0.9  # |x| < 0.9: well-conditioned
    return (x,)


def run(x):
    out = torch.empty_like(x)
    n = x.numel()
    poly_kernel[(triton.cdiv(n, 1024),)](x, out, n, DEGREE=512, BLOCK=1024, num_warps=4)
    return out


def reference(x):
    acc = torch.zeros_like(x)
    for _ in range(512):
        acc = acc * x + 0.5
    return acc
