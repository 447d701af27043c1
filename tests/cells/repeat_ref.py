"""Reference that launches its kernel four times for one answer: a version that launches it once does a quarter of
the same work, about 4x faster however busy the machine is (both sides' time is the interpreter's, and load slows
both alike; a sleep would not slow down with them)."""
import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
N = 4_096


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


def make_inputs():
    return torch.randn(N, device=DEVICE), torch.randn(N, device=DEVICE)


def run(x, y):
    out = torch.empty_like(x)
    for _ in range(4):
        add_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, out, x.numel(), BLOCK=1024)
    return out
