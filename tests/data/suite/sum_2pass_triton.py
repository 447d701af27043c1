"""Already good (near the roof): a two-pass Triton sum of 64M floats with large blocks.

Pass 1 (the kernel profiled): 4,096 programs each load 16,384 contiguous floats (16 warps, 32
values per thread, all loads issued up front) and write one partial sum; pass 2: one program adds
the 4,096 partials. Pass 1 reads 256 MB once, with wide coalesced loads and plenty of bytes in
flight: it runs near the DRAM roof, and there is little left to gain.
"""
import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
N = 2**26
BLOCK = 16384


@triton.jit
def sum_partial_kernel(x_ptr, partial_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(partial_ptr + tl.program_id(0), tl.sum(x, axis=0))


@triton.jit
def sum_final_kernel(partial_ptr, out_ptr, m, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr, tl.sum(tl.load(partial_ptr + offs, mask=offs < m, other=0.0), axis=0))


def make_inputs():
    torch.manual_seed(0)
    return (torch.randn(N, device=DEVICE),)


def run(x):
    programs = triton.cdiv(x.numel(), BLOCK)
    partial = torch.empty(programs, device=x.device, dtype=torch.float32)
    out = torch.empty(1, device=x.device, dtype=torch.float32)
    sum_partial_kernel[(programs,)](x, partial, x.numel(), BLOCK=BLOCK, num_warps=16)
    sum_final_kernel[(1,)](partial, out, programs, BLOCK=triton.next_power_of_2(programs), num_warps=8)
    return out


def reference(x):
    return x.double().sum().reshape(1).float()
