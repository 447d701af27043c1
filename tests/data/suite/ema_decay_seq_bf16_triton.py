"""Planted bottleneck: latency bound (an exponential moving average walked step by step, one load in flight).

Per-channel EMA over time, h_t = a * h_(t-1) + (1 - a) * x_t (a per-channel decay, h_0 = 0), for
256 sequences x 4,096 channels x 64 steps of bf16 ([B, T, C]: the channels of one step are
contiguous); the running state is fp32 and every h_t is written (bf16). A program takes 256
channels of one sequence (8 warps, one channel per thread) and walks the 64 steps: load x_t, one
FMA, store h_t. The next step's load waits for this step's store to issue (x and y may alias as
far as the compiler knows), so each warp has one 64-byte load in flight and waits a full DRAM
round trip per step. 4,096 programs (~3.9 waves at 2,048 threads per SM) with all warps resident
still keep only ~4 KB of loads in flight per SM: the 268 MB (x read once, h written once, ~88 us
at 3.05 TB/s) should take ~2-3x that, with neither the SMs nor DRAM near a limit and the warps
stalled on long scoreboard. Loading several steps ahead (a block of steps per iteration,
software pipelining) or a chunked parallel scan over time fixes it.
"""

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
B, T, C = 256, 64, 4096
BLOCK_C = 256


@triton.jit
def ema_decay_kernel(x_ptr, a_ptr, y_ptr, T, C, BLOCK_C: tl.constexpr):
    seq = tl.program_id(0).to(tl.int64)
    offs_c = tl.program_id(1) * BLOCK_C + tl.arange(0, BLOCK_C)  # C is a multiple of BLOCK_C
    a = tl.load(a_ptr + offs_c)
    h = tl.zeros([BLOCK_C], tl.float32)
    base = seq * T * C + offs_c
    for t in range(T):  # sequential in time: one step's load, FMA and store, then the next
        x = tl.load(x_ptr + base + t * C).to(tl.float32)
        h = a * h + (1.0 - a) * x
        tl.store(y_ptr + base + t * C, h.to(y_ptr.dtype.element_ty))


def make_inputs():
    torch.manual_seed(0)
    x = torch.randn(B, T, C, device=DEVICE, dtype=torch.bfloat16)
    a = 0.5 + 0.49 * torch.rand(C, device=DEVICE)  # decays in [0.5, 0.99)
    return x, a


def run(x, a):
    b, t, c = x.shape
    assert c % BLOCK_C == 0
    y = torch.empty_like(x)
    ema_decay_kernel[(b, c // BLOCK_C)](x, a, y, t, c, BLOCK_C=BLOCK_C, num_warps=8)
    return y


def reference(x, a):
    h = torch.zeros(x.shape[0], x.shape[2], device=x.device)
    ys = []
    for t in range(x.shape[1]):
        h = a * h + (1.0 - a) * x[:, t].float()
        ys.append(h.to(x.dtype))
    return torch.stack(ys, dim=1)
