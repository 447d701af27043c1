"""Near miss for small_grid: a grid of 4 programs that is still launch-bound (a tiny sum).

Four programs each sum 2,048 fp16 values (16 KB of input in all) and write one fp32 partial.
Four programs on 132 SMs is a small grid by any rule (Nsight Compute's launch-configuration rule
will say so), but the kernel is over in a few microseconds: even a perfectly spread grid could
not beat the cost of the launch itself. The real lever is the launch (fuse, batch, graph), not the
grid size.
"""
import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
N = 8192
PROGRAMS = 4


@triton.jit
def tiny_sum_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0).to(tl.float32)
    tl.store(out_ptr + tl.program_id(0), tl.sum(x, axis=0))


def make_inputs():
    torch.manual_seed(0)
    return (torch.randn(N, device=DEVICE, dtype=torch.float16),)


def run(x):
    out = torch.empty(PROGRAMS, device=x.device, dtype=torch.float32)
    tiny_sum_kernel[(PROGRAMS,)](x, out, x.numel(), BLOCK=N // PROGRAMS, num_warps=4)
    return out


def reference(x):
    return x.double().view(PROGRAMS, -1).sum(1).float()
