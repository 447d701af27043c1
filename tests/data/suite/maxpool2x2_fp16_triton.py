"""Already good (near_roof), a near miss for coalescing: 2 x 2 max pooling with stride-2 loads.

MaxPool2d(2, stride 2) of 512 planes of 512 x 512 fp16 (256 MB in, 64 MB out). Each program takes
4 output rows of one plane and loads its inputs as four stride-2 vectors (even and odd columns of
the two input rows), so each load instruction uses only every other 2-byte element of the sectors
it touches: a profiler counts half of each sector as wasted. It is not: the even and odd loads of
a row are issued back to back and hit the same sectors, so L1 serves the second one and DRAM moves
each byte once: ~320 MB, the minimum (~107 us at 3 TB/s). The kernel should sit at the DRAM roof
with nothing to gain from "fixing" the stride.
"""
import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
PLANES, HIN, WIN = 512, 512, 512  # N * C = 512 planes
ROWS = 4  # output rows per program


@triton.jit
def maxpool2x2_kernel(x_ptr, out_ptr, HIN, WIN, ROWS: tl.constexpr, WOUT: tl.constexpr):
    pid = tl.program_id(0)
    hout = HIN // 2
    blocks_per_plane = hout // ROWS
    plane = (pid // blocks_per_plane).to(tl.int64)
    oy = (pid % blocks_per_plane) * ROWS + tl.arange(0, ROWS)  # [ROWS]
    ox = tl.arange(0, WOUT)  # [WOUT]
    top = x_ptr + plane * HIN * WIN + (2 * oy)[:, None] * WIN + (2 * ox)[None, :]  # stride-2 columns
    a = tl.load(top)
    b = tl.load(top + 1)
    c = tl.load(top + WIN)
    d = tl.load(top + WIN + 1)
    m = tl.maximum(tl.maximum(a, b), tl.maximum(c, d))
    tl.store(out_ptr + plane * hout * WOUT + oy[:, None] * WOUT + ox[None, :], m)


def make_inputs():
    torch.manual_seed(0)
    return (torch.randn(PLANES, HIN, WIN, device=DEVICE, dtype=torch.float16),)


def run(x):
    planes, hin, win = x.shape
    assert hin % (2 * ROWS) == 0 and win % 2 == 0
    out = torch.empty(planes, hin // 2, win // 2, device=x.device, dtype=x.dtype)
    grid = (planes * (hin // 2 // ROWS),)
    maxpool2x2_kernel[grid](x, out, hin, win, ROWS=ROWS, WOUT=win // 2, num_warps=4)
    return out


def reference(x):
    return torch.nn.functional.max_pool2d(x.float(), 2).half()
