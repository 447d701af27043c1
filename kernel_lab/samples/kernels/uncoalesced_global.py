"""Planted bottleneck: uncoalesced global memory access.

Neighbouring threads read addresses 4096 floats (16 KB) apart, so each thread's
4-byte load lands in its own 32-byte sector: the memory system moves 32 bytes to
deliver 4. Most of the DRAM and L2 traffic is wasted. Reading contiguous data
(or staging a tile through shared memory, as a transpose does) fixes it.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def strided_copy_kernel(x_ptr, out_ptr, n, STRIDE: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    i = pid * BLOCK + tl.arange(0, BLOCK)
    mask = i < n
    # out[i] = x[(i % STRIDE) * (n // STRIDE) + i // STRIDE]: consecutive i are n // STRIDE apart in x
    src = (i % STRIDE) * (n // STRIDE) + i // STRIDE
    tl.store(out_ptr + i, tl.load(x_ptr + src, mask=mask), mask=mask)


def make_inputs():
    torch.manual_seed(0)
    gpu = torch.cuda.is_available()  # without one: a smaller size, for Triton's CPU interpreter
    x = torch.randn(2**24 if gpu else 2**15, device="cuda" if gpu else "cpu")
    return (x,)


def run(x):
    out = torch.empty_like(x)
    n = x.numel()
    strided_copy_kernel[(triton.cdiv(n, 1024),)](x, out, n, STRIDE=4096, BLOCK=1024)
    return out


def reference(x):
    return x.view(4096, -1).t().reshape(-1)
