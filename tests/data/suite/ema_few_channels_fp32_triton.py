"""Planted bottleneck: small grid (an EMA over time with 1,024 channels per program: 16 programs for 132 SMs).

Per-channel exponential moving average h_t = a * h_(t-1) + (1 - a) * x_t of a [1,024 steps, 16,384
channels] fp32 signal (a per-channel decay, h_0 = 0; 64 MB in, 64 MB out). Each program owns 1,024
contiguous channels (4 warps, 8 channels per thread, 4 KB per step in two 16-byte vectors per
thread) and walks the 1,024 steps in order. That is 16 programs: 16 SMs hold one block of 4 warps
each and the other 116 SMs are idle for the whole kernel, which takes ~1,024 DRAM round trips
(~1 ms) for 128 MB that the GPU moves in ~42 us. Smaller channel blocks (64 channels per program:
256 programs) fill the machine; a chunked scan over time adds parallelism beyond that.
"""

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
T, C = 1024, 16384
BLOCK_C = 1024


@triton.jit
def ema_few_channels_kernel(x_ptr, a_ptr, y_ptr, T, C, BLOCK_C: tl.constexpr):
    offs_c = tl.program_id(0) * BLOCK_C + tl.arange(0, BLOCK_C)  # C is a multiple of BLOCK_C
    a = tl.load(a_ptr + offs_c)
    h = tl.zeros([BLOCK_C], tl.float32)
    for t in range(T):
        x = tl.load(x_ptr + t * C + offs_c)
        h = a * h + (1.0 - a) * x
        tl.store(y_ptr + t * C + offs_c, h)


def make_inputs():
    torch.manual_seed(0)
    x = torch.randn(T, C, device=DEVICE)
    a = 0.5 + 0.49 * torch.rand(C, device=DEVICE)
    return x, a


def run(x, a):
    t, c = x.shape
    assert c % BLOCK_C == 0
    y = torch.empty_like(x)
    ema_few_channels_kernel[(c // BLOCK_C,)](x, a, y, t, c, BLOCK_C=BLOCK_C, num_warps=4)
    return y


def reference(x, a):
    h = torch.zeros(x.shape[1], device=x.device)
    ys = []
    for t in range(x.shape[0]):
        h = a * h + (1.0 - a) * x[t]
        ys.append(h)
    return torch.stack(ys)
