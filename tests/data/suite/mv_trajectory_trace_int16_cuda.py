"""Planted bottleneck: latency bound (each pixel follows its motion trajectory through 32 motion-vector fields, one dependent load per field).

Trajectory tracing for temporal video filtering: for every pixel of a 4,096 x 2,048 frame, follow its
motion through 32 consecutive motion-vector fields (one int16 (dx, dy) vector per 4 x 4 block, in
quarter-pel units, as a codec stores them: 32 x 512 x 1,024 x 4 B = 64 MiB, more than L2 keeps),
position clamped to the frame, and write the total displacement. Step t reads the vector of the block
the pixel is in *now*, so each step's load depends on the previous one: one 4-byte load in flight per
thread, ~14 SASS instructions per step (nvcc 13, sm_90: 26 registers, 0 spills, the loop unrolled by 4).
A 128-thread block is a 32 x 4 pixel patch: its 4 warps read the same 32-byte sector (8 block vectors)
of each field at about the same time, so each step is a DRAM round trip shared by 4 warps (~0.5 KB of
DRAM reads in flight per SM at 64 warps). 8.4M pixels = 65,536 blocks, ~31 waves of 16 blocks per SM, x
32 steps x ~0.5-0.8 us: ~0.5-0.8 ms, against ~44 us for the 134 MB (fields once, displacements out) at
3.05 TB/s; issue ~64 warps x 14 instructions per ~1,000-cycle step = ~22% of the slots. The hypothesis:
'Latency Issue' (SM% and MEM% both well under 60), long-scoreboard stalls dominating, full occupancy,
many waves. Tracing several pixels' trajectories per thread with their loads interleaved (more
independent loads in flight) would hide the latency.
"""

import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
#include <cstdint>

// mv: [steps][bh][bw] packed (dx, dy) int16 pairs in quarter-pel units; one vector per 4 x 4 pixel block
__global__ void __launch_bounds__(128) mv_trajectory_trace(const int* __restrict__ mv, int* __restrict__ disp,
                                                           int h, int w, int steps) {
    int x = blockIdx.x * 32 + (threadIdx.x & 31);   // a block is a 32 x 4 pixel patch
    int y = blockIdx.y * 4 + (threadIdx.x >> 5);
    int bw = w >> 2, bh = h >> 2;
    int qx = x * 4, qy = y * 4;                      // position in quarter-pel
    int maxqx = (w - 1) * 4, maxqy = (h - 1) * 4;
    const int* field = mv;
    for (int t = 0; t < steps; ++t, field += (size_t)bh * bw) {
        int v = field[(qy >> 4) * bw + (qx >> 4)];   // vector of the 4 x 4 block under the current position
        qx = min(max(qx + (int)(short)(v & 0xffff), 0), maxqx);
        qy = min(max(qy + (v >> 16), 0), maxqy);
    }
    disp[(size_t)y * w + x] = qx - x * 4;
    disp[(size_t)h * w + (size_t)y * w + x] = qy - y * 4;
}

torch::Tensor trace(torch::Tensor mv, int64_t h, int64_t w) {
    int steps = mv.size(0);
    TORCH_CHECK(mv.size(1) == h / 4 && mv.size(2) == w / 4 && mv.size(3) == 2 && w % 32 == 0 && h % 4 == 0);
    auto disp = torch::empty({2, h, w}, mv.options().dtype(torch::kInt32));
    dim3 grid(w / 32, h / 4);
    mv_trajectory_trace<<<grid, 128>>>(reinterpret_cast<const int*>(mv.data_ptr<int16_t>()), disp.data_ptr<int>(),
                                       (int)h, (int)w, steps);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return disp;
}
"""

module = load_inline(
    "kls_mv_trajectory_trace_int16_cuda",
    cpp_sources="torch::Tensor trace(torch::Tensor mv, int64_t h, int64_t w);",
    cuda_sources=CUDA_SRC,
    functions=["trace"],
    extra_cuda_cflags=["-O3", "-lineinfo"],
)

H, W = 2048, 4096
STEPS = 32


def make_inputs():
    g = torch.Generator(device="cuda")
    g.manual_seed(0)
    bh, bw = H // 4, W // 4
    by = torch.arange(bh, device="cuda", dtype=torch.float32)[:, None]
    bx = torch.arange(bw, device="cuda", dtype=torch.float32)[None, :]
    fields = []
    for t in range(STEPS):  # a slow pan, a swirl that drifts over time, and per-block noise (quarter-pel)
        dx = 6.0 + 10.0 * torch.sin(by / 40.0 + 0.2 * t) + torch.randn(bh, bw, device="cuda", generator=g) * 3.0
        dy = -3.0 + 8.0 * torch.cos(bx / 55.0 - 0.1 * t) + torch.randn(bh, bw, device="cuda", generator=g) * 3.0
        fields.append(torch.stack([dx, dy], dim=2))
    mv = torch.stack(fields).round().clamp(-64, 64).to(torch.int16).contiguous()  # [STEPS, bh, bw, 2]
    return (mv,)


def run(mv):
    return module.trace(mv, H, W)


def reference(mv):
    dev = mv.device
    steps = mv.shape[0]
    y, x = torch.meshgrid(torch.arange(H, device=dev), torch.arange(W, device=dev), indexing="ij")
    qx, qy = x * 4, y * 4
    for t in range(steps):
        v = mv[t].long()
        blk = v[(qy >> 4), (qx >> 4)]  # [H, W, 2]
        qx = (qx + blk[..., 0]).clamp(0, (W - 1) * 4)
        qy = (qy + blk[..., 1]).clamp(0, (H - 1) * 4)
    return torch.stack([qx - x * 4, qy - y * 4]).int()
