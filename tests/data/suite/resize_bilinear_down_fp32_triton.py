"""Already good (near_roof), a near miss for coalescing: a bilinear downscale 1024 -> 640 whose taps are gathers.

Bilinear resize (align_corners=False, as torch.nn.functional.interpolate) of 64 planes of
1,024 x 1,024 fp32 to 640 x 640. Each program computes 8 output rows x 128 output columns: the
source coordinates (scale 1.6) and weights are computed once per row and once per column, and
the four taps are four gathers, so each load instruction's lanes are 1.6 elements apart: a warp's
32 four-byte loads span ~205 bytes (7 sectors for 128 useful bytes) and a profiler counts part of
every sector as wasted. It is not wasted: the neighbouring taps (x0 + 1, the next output column,
the next output row) read the rest of those sectors from L1/L2, and at scale 1.6 every input row
and column is a tap of some output, so DRAM moves each input byte once: 256 MB in + 100 MB out,
~117 us at 3.05 TB/s. The four gathers' 64-bit addresses and the blend cost ~50 instructions per
output (triton 3.9 SASS), ~45 us of issue at full rate, well under the DRAM time (in fp16 the same
instructions would face half the bytes: that is why this one is fp32). The hypothesis: at the DRAM
roof, nothing to gain from "coalescing" the taps.
"""

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
PLANES, HIN, WIN = 64, 1024, 1024
HOUT, WOUT = 640, 640
ROWS, COLS = 8, 128  # outputs per program


@triton.jit
def resize_bilinear_kernel(x_ptr, out_ptr, HIN, WIN, HOUT, WOUT, scale_h, scale_w, ROWS: tl.constexpr, COLS: tl.constexpr):
    row_blocks = HOUT // ROWS
    plane = (tl.program_id(0) // row_blocks).to(tl.int64)
    oy = (tl.program_id(0) % row_blocks) * ROWS + tl.arange(0, ROWS)
    ox = tl.program_id(1) * COLS + tl.arange(0, COLS)
    sy = tl.maximum((oy.to(tl.float32) + 0.5) * scale_h - 0.5, 0.0)  # source coordinates, clamped at 0
    sx = tl.maximum((ox.to(tl.float32) + 0.5) * scale_w - 0.5, 0.0)
    y0 = sy.to(tl.int32)  # floor (non-negative)
    x0 = sx.to(tl.int32)
    ly = sy - y0.to(tl.float32)
    lx = sx - x0.to(tl.float32)
    y1 = tl.minimum(y0 + 1, HIN - 1)
    x1 = tl.minimum(x0 + 1, WIN - 1)
    src = x_ptr + plane * HIN * WIN
    r0 = src + y0[:, None] * WIN
    r1 = src + y1[:, None] * WIN
    a = tl.load(r0 + x0[None, :]).to(tl.float32)  # the four taps: gathers
    b = tl.load(r0 + x1[None, :]).to(tl.float32)
    c = tl.load(r1 + x0[None, :]).to(tl.float32)
    d = tl.load(r1 + x1[None, :]).to(tl.float32)
    wx1 = lx[None, :]
    wx0 = 1.0 - wx1
    wy1 = ly[:, None]
    wy0 = 1.0 - wy1
    val = wy0 * (wx0 * a + wx1 * b) + wy1 * (wx0 * c + wx1 * d)
    dst = out_ptr + plane * HOUT * WOUT + oy[:, None] * WOUT + ox[None, :]
    tl.store(dst, val.to(out_ptr.dtype.element_ty))


def make_inputs():
    torch.manual_seed(0)
    return (torch.randn(PLANES, HIN, WIN, device=DEVICE),)


def run(x):
    planes, hin, win = x.shape
    assert HOUT % ROWS == 0 and WOUT % COLS == 0
    out = torch.empty(planes, HOUT, WOUT, device=x.device, dtype=x.dtype)
    grid = (planes * (HOUT // ROWS), WOUT // COLS)
    resize_bilinear_kernel[grid](x, out, hin, win, HOUT, WOUT, hin / HOUT, win / WOUT, ROWS=ROWS, COLS=COLS, num_warps=4)
    return out


def reference(x):
    return torch.nn.functional.interpolate(x[None], size=(HOUT, WOUT), mode="bilinear", align_corners=False)[0]
