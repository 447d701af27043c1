"""Planted bottleneck: latency bound (a first-order recursive (IIR) vertical smoothing filter, one row per step).

Exponential smoothing down the columns of 132 fp16 frames of 256 x 4,096 pixels (277 MB):
y[r, c] = a x[r, c] + (1 - a) y[r - 1, c], y[-1] = 0, a = 0.25 - the causal pass of a recursive
(Deriche-style) blur. Each program owns 128 columns of one frame (4 warps, one column per thread) and
walks the 256 rows in order, carrying y in a register: per row one 2-byte load per thread (64 bytes per
warp), an FMA and a store. The loads are independent of y, but the loop does not overlap them (2-byte
loads are not pipelined): every row waits a DRAM round trip (~0.6-1 us). 4,224 programs = 2 waves at
16 programs per SM; ~4 KB of loads in flight per SM, ~0.5-0.9 TB/s; ~0.5 ms against ~180 us for the
554 MB moved at 3.05 TB/s. The hypothesis: 'Latency Issue' (SM% and MEM% < 40%), long-scoreboard stalls
dominating the cycles between issues, full occupancy. The fix: more bytes in flight per thread (several
columns per thread, 16-byte loads, or prefetching rows ahead).
"""

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
FRAMES = 132
ROWS = 256
COLS = 4096
BLOCK = 128
ALPHA = 0.25


@triton.jit
def iir_vertical_kernel(x_ptr, y_ptr, rows, cols, alpha, BLOCK: tl.constexpr):
    c = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = c < cols
    base = tl.program_id(1).to(tl.int64) * rows * cols
    y = tl.zeros([BLOCK], dtype=tl.float32)
    for r in range(rows):
        x = tl.load(x_ptr + base + r * cols + c, mask=mask, other=0.0).to(tl.float32)
        y = alpha * x + (1.0 - alpha) * y
        tl.store(y_ptr + base + r * cols + c, y.to(tl.float16), mask=mask)


def make_inputs():
    g = torch.Generator(device=DEVICE)
    g.manual_seed(0)
    img = torch.rand(FRAMES, ROWS, COLS, device=DEVICE, generator=g).half()
    return (img,)


def run(img):
    frames, rows, cols = img.shape
    out = torch.empty_like(img)
    iir_vertical_kernel[(triton.cdiv(cols, BLOCK), frames)](img, out, rows, cols, ALPHA, BLOCK=BLOCK, num_warps=4)
    return out


def reference(img):
    x = img.float()
    out = torch.empty_like(img)
    y = torch.zeros_like(x[:, 0])
    for r in range(img.shape[1]):
        y = ALPHA * x[:, r] + (1.0 - ALPHA) * y
        out[:, r] = y.half()
    return out
