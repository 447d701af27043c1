"""Planted bottleneck: latency bound (near miss for uncoalesced_global: a data-dependent walk whose loads stay coalesced).

Downslope flow length to the channel network (a hydrology terrain index, as in TauDEM / WhiteboxTools
"downslope distance to stream"): D8 flow directions of a 4,096 x 4,096 DEM as uint8 codes (0-7 = E, SE, S,
SW, W, NW, N, NE; 255 = channel cell, stop), 16.8 MB (L2-resident). Every cell's thread follows the arrows
downstream, one dependent one-byte load per step (the next cell depends on the code just read), adding 1 or
sqrt(2) cell sizes, until it reaches a channel; fp32 metres out [4096, 4096] (67 MB). The terrain drains
towards valley-floor channels every 128 rows, so paths are up to 127 steps (63.5 on average, 1.07G steps in
all) and go one row down per step (S / SE / SW with the noise): a warp's 32 lanes, on 32 neighbouring cells
of one row, stay within one or two 128-byte lines at every step, so the "gather" is coalesced; but each
step's address waits on the previous load (an L2 hit, the rows were brought in by other blocks, ~250+
cycles) and only ~11 instructions sit between consecutive loads. 65,536 blocks of 256 threads (one row
segment each), full occupancy.
The hypothesis: latency_bound: long-scoreboard stalls dominating, issue ~0.3-0.6 per cycle, SM% and MEM%
both moderate (~30-60%), DRAM low (~85 MB, < 15%), ~0.6-1.2 ms (13 registers, full occupancy); sectors per
request close to ideal (~1-2), so not uncoalesced_global. The fix: more independent walks per thread
(several cells interleaved, or one walk per path start and scatter the lengths back along it), or a flow-
length accumulation that propagates distances upstream row by row instead of tracing every cell.
"""

import math

import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
#include <cstdint>

// codes 0..7: E, SE, S, SW, W, NW, N, NE (y grows downwards); dx + 1 and dy + 1 packed as nibbles
#define DX1_TABLE 0x21000122u
#define DY1_TABLE 0x00012221u

__global__ void __launch_bounds__(256) d8_flow_length(const uint8_t* __restrict__ dir, float* __restrict__ out,
                                                      int height, int width, int max_steps, float cell) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y;
    if (x >= width) return;
    long idx = (long)y * width + x;
    float len = 0.0f;
    for (int s = 0; s < max_steps; ++s) {
        unsigned d = dir[idx];
        if (d > 7u) break;                                   // channel (or sink) reached
        int dx = (int)((DX1_TABLE >> (4u * d)) & 0xFu) - 1;
        int dy = (int)((DY1_TABLE >> (4u * d)) & 0xFu) - 1;
        len += (d & 1u) ? 1.41421356f : 1.0f;
        idx += (long)dy * width + dx;
    }
    out[(long)y * width + x] = len * cell;
}

torch::Tensor flow_length(torch::Tensor dir, int64_t max_steps, double cell) {
    TORCH_CHECK(dir.dim() == 2 && dir.scalar_type() == torch::kByte && dir.is_cuda() && dir.is_contiguous());
    int height = dir.size(0), width = dir.size(1);
    auto out = torch::empty({height, width}, dir.options().dtype(torch::kFloat));
    dim3 grid((width + 255) / 256, height);
    d8_flow_length<<<grid, 256>>>(dir.data_ptr<uint8_t>(), out.data_ptr<float>(), height, width, (int)max_steps,
                                  (float)cell);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

module = load_inline(
    "kls_d8_flow_length_trace_uint8_cuda",
    cpp_sources="torch::Tensor flow_length(torch::Tensor dir, int64_t max_steps, double cell);",
    cuda_sources=CUDA_SRC,
    functions=["flow_length"],
    extra_cuda_cflags=["-O3", "-lineinfo"],
)

H = 4096
W = 4096
VALLEY = 128          # channel rows every VALLEY rows (the last row of each band)
CELL = 30.0           # metres (SRTM-like grid)
MAX_STEPS = 1024      # safety cap; paths here are < VALLEY steps
# codes 0..7: E, SE, S, SW, W, NW, N, NE
DX = [1, 1, 0, -1, -1, -1, 0, 1]
DY = [0, 1, 1, 1, 0, -1, -1, -1]


def d8_directions(z):
    """Steepest-descent D8 code per cell (drop / distance), neighbours outside the grid excluded; 255 on channels."""
    h, w = z.shape
    pad = torch.nn.functional.pad(z[None, None], (1, 1, 1, 1), value=float("inf"))[0, 0]
    best = torch.full_like(z, -float("inf"))
    code = torch.zeros(h, w, dtype=torch.uint8, device=z.device)
    for k in range(8):
        nb = pad[1 + DY[k]:1 + DY[k] + h, 1 + DX[k]:1 + DX[k] + w]
        slope = (z - nb) / (math.sqrt(2.0) if k % 2 else 1.0)
        better = slope > best
        best = torch.where(better, slope, best)
        code = torch.where(better, torch.full_like(code, k), code)
    code[best <= 0] = 255                                                   # pit (none with this terrain)
    return code


def make_inputs():
    g = torch.Generator(device="cuda")
    g.manual_seed(0)
    y = torch.arange(H, device="cuda", dtype=torch.float32)[:, None]
    x = torch.arange(W, device="cuda", dtype=torch.float32)[None, :]
    # bands draining south to a channel row; a gentle cross-slope; rough surface
    z = (VALLEY - 1 - torch.remainder(y, VALLEY)) * 1.0 + 0.02 * torch.abs(x - W / 2) \
        + 0.45 * torch.rand(H, W, device="cuda", generator=g)
    code = d8_directions(z)
    channel = (torch.remainder(y, VALLEY) == VALLEY - 1).expand(H, W)
    code[channel] = 255
    return (code.contiguous(),)


def run(dir_codes):
    return module.flow_length(dir_codes, MAX_STEPS, CELL)


def reference(dir_codes):
    h, w = dir_codes.shape
    dflat = dir_codes.reshape(-1).long()
    dx = torch.tensor(DX + [0], device=dir_codes.device)
    dy = torch.tensor(DY + [0], device=dir_codes.device)
    step = torch.tensor([1.0, math.sqrt(2.0)] * 4 + [0.0], device=dir_codes.device, dtype=torch.float64)
    idx = torch.arange(h * w, device=dir_codes.device)
    length = torch.zeros(h * w, device=dir_codes.device, dtype=torch.float64)
    for _ in range(MAX_STEPS):
        d = dflat[idx]
        d = torch.where(d > 7, torch.full_like(d, 8), d)
        if bool((d == 8).all()):
            break
        length += step[d]
        idx = idx + dy[d] * w + dx[d]
    return (length * CELL).float().reshape(h, w)
