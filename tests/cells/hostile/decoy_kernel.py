"""Hostile: launches a kernel of its own on a scratch buffer (a decoy) and returns torch.softmax."""
import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"



@triton.jit
def touch_kernel(ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(ptr + offs, tl.load(ptr + offs) * 1.0)


def run(x):
    scratch = torch.zeros(16, device=x.device)
    touch_kernel[(1,)](scratch, BLOCK=16)
    return torch.softmax(x, dim=-1)
