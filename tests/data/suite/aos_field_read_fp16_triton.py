"""Planted bottleneck: uncoalesced global loads (three fields read out of an array of structs).

16M particles stored as an array of structs: 16 fp16 fields, 32 bytes per particle. The kernel
needs three fields (f0 * f5 + f9) and loads each with its own instruction: consecutive threads
read addresses 32 bytes apart, so every load touches one sector per thread and uses 2 of its 32
bytes. The three loads share sectors (the second and third hit in L1), but DRAM still delivers
the whole 512 MB array to use 96 MB of it. Storing the fields as separate arrays (struct of
arrays) makes each load coalesced and cuts the traffic about five-fold.
"""
import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
N = 2**24
FIELDS = 16


@triton.jit
def aos_fields_kernel(p_ptr, out_ptr, n, FIELDS: tl.constexpr, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = i < n
    base = p_ptr + i.to(tl.int64) * FIELDS
    f0 = tl.load(base + 0, mask=mask).to(tl.float32)
    f5 = tl.load(base + 5, mask=mask).to(tl.float32)
    f9 = tl.load(base + 9, mask=mask).to(tl.float32)
    tl.store(out_ptr + i, (f0 * f5 + f9).to(tl.float16), mask=mask)


def make_inputs():
    torch.manual_seed(0)
    return (torch.randn(N, FIELDS, device=DEVICE, dtype=torch.float16),)


def run(p):
    out = torch.empty(p.shape[0], device=p.device, dtype=torch.float16)
    aos_fields_kernel[(triton.cdiv(p.shape[0], 1024),)](p, out, p.shape[0], FIELDS=FIELDS, BLOCK=1024, num_warps=4)
    return out


def reference(p):
    f = p.float()
    return (f[:, 0] * f[:, 5] + f[:, 9]).half()
