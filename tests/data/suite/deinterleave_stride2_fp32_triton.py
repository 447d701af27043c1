"""Near miss for uncoalesced_global: stride-2 loads whose other half the same warp reads.

|z|^2 of 64M complex numbers stored interleaved (re, im, re, im, ... in fp32). The kernel loads
the real parts (stride 2) and the imaginary parts (stride 2) with two instructions. Each
instruction alone uses half of every sector it touches, so Nsight Compute counts "excessive"
sectors; but the two loads touch exactly the same sectors, the second is served by L1, and DRAM
moves every byte once (512 MB in, 256 MB out). The kernel is a streaming, memory-bound kernel
near the DRAM roof; rewriting the access (e.g. one 8-byte load per element) could only save
L1/L2 work, not DRAM time.
"""
import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
N = 2**26


@triton.jit
def abs2_interleaved_kernel(z_ptr, out_ptr, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = i < n
    re = tl.load(z_ptr + 2 * i.to(tl.int64), mask=mask)
    im = tl.load(z_ptr + 2 * i.to(tl.int64) + 1, mask=mask)
    tl.store(out_ptr + i, re * re + im * im, mask=mask)


def make_inputs():
    torch.manual_seed(0)
    return (torch.randn(N, 2, device=DEVICE),)


def run(z):
    out = torch.empty(z.shape[0], device=z.device)
    abs2_interleaved_kernel[(triton.cdiv(z.shape[0], 1024),)](z, out, z.shape[0], BLOCK=1024, num_warps=4)
    return out


def reference(z):
    return z[:, 0] * z[:, 0] + z[:, 1] * z[:, 1]
