"""Reference in float16: x * y + z, computed in float32 and rounded once to float16."""
import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
SHAPES = [(8192,)]


@triton.jit
def fma_kernel(x_ptr, y_ptr, z_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask).to(tl.float32)
    y = tl.load(y_ptr + offs, mask=mask).to(tl.float32)
    z = tl.load(z_ptr + offs, mask=mask).to(tl.float32)
    tl.store(out_ptr + offs, x * y + z, mask=mask)


def make_inputs(n=8192):
    return tuple(torch.randn(n, device=DEVICE, dtype=torch.float16) for _ in range(3))


def run(x, y, z):
    out = torch.empty_like(x)
    fma_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, z, out, x.numel(), BLOCK=1024)
    return out
