"""Planted bottleneck: shared-memory bank conflicts (separable 5 x 5 average pooling, one thread per tile row).

AvgPool2d(5, stride 1) of 64 planes of 964 x 964 fp32 (238 MB in, 236 MB out), separable and tiled:
a 128-thread block stages a 36 x 64 input tile in shared memory (coalesced), sums columns of 5
(lanes on consecutive columns: conflict-free), then sums rows of 5 with one thread per tile row
(32 rows x 4 segments of 15 outputs) and finally stores the 32 x 60 output tile coalesced. The
tiles are 64 floats wide, so row r starts at bank 0 like every other row: in the row pass the 32
lanes of a warp (32 rows, same column) all hit one bank, for each of the 5 reads and the write of
every output: 32-way conflicts, 32 shared-memory wavefronts where one would do. nvcc 13.0 reloads 4
or 5 of the 5 window values per output (SASS), so that is ~10,000-11,500 wavefronts per tile against
~500 in the conflict-free passes; 30,720 tiles, ~233 per SM, ~1-1.5 ms of shared-memory time.
DRAM needs ~474 MB (~160 us at 3 TB/s). Padding the row pitch to 65 floats (or mapping lanes
to columns in the row pass too) removes the conflicts.
"""
import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
#define K 5          // pooling window (stride 1, no padding)
#define OH 32        // output rows per tile
#define OW 60        // output columns per tile
#define PITCH 64     // OW + K - 1: row pitch of the shared tiles, in floats (no padding)
#define THREADS 128
#define SEG 15       // output columns per thread in the row pass: 4 segments of 15

__global__ void __launch_bounds__(THREADS) avgpool5_rowthread(const float* __restrict__ in, float* __restrict__ out,
                                                              int H, int W) {
    __shared__ float tile[OH + K - 1][PITCH];   // input tile; reused for the output tile
    __shared__ float colsum[OH][PITCH];
    const int Ho = H - K + 1, Wo = W - K + 1;
    const int oy0 = blockIdx.y * OH, ox0 = blockIdx.x * OW;
    const float* src = in + (size_t)blockIdx.z * H * W;
    for (int i = threadIdx.x; i < (OH + K - 1) * PITCH; i += THREADS) {   // coalesced rows of 64 floats
        int r = i / PITCH, c = i % PITCH;
        tile[r][c] = src[(size_t)(oy0 + r) * W + ox0 + c];
    }
    __syncthreads();
    for (int i = threadIdx.x; i < OH * PITCH; i += THREADS) {   // column pass: lanes on consecutive columns
        int r = i / PITCH, c = i % PITCH;
        float s = 0.f;
        #pragma unroll
        for (int dy = 0; dy < K; ++dy) s += tile[r + dy][c];
        colsum[r][c] = s;
    }
    __syncthreads();
    int y = threadIdx.x % OH, x0 = (threadIdx.x / OH) * SEG;   // row pass: one thread per row (and segment)
    for (int x = x0; x < x0 + SEG; ++x) {
        float s = 0.f;
        #pragma unroll
        for (int dx = 0; dx < K; ++dx) s += colsum[y][x + dx];   // 32 lanes = 32 rows, one column: one bank
        tile[y][x] = s * (1.0f / (K * K));                       // same bank again
    }
    __syncthreads();
    float* dst = out + (size_t)blockIdx.z * Ho * Wo;
    for (int i = threadIdx.x; i < OH * OW; i += THREADS) {   // coalesced store of the 32 x 60 output tile
        int r = i / OW, c = i % OW;
        dst[(size_t)(oy0 + r) * Wo + ox0 + c] = tile[r][c];
    }
}

torch::Tensor avgpool(torch::Tensor x) {
    int P = x.size(0), H = x.size(1), W = x.size(2);   // (H - 4) % 32 == 0, (W - 4) % 60 == 0
    auto out = torch::empty({P, H - K + 1, W - K + 1}, x.options());
    dim3 grid((W - K + 1) / OW, (H - K + 1) / OH, P);
    avgpool5_rowthread<<<grid, THREADS>>>(x.data_ptr<float>(), out.data_ptr<float>(), H, W);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

module = load_inline("kls_avgpool_rowthread_conflict_fp32_cuda", cpp_sources="torch::Tensor avgpool(torch::Tensor x);",
                     cuda_sources=CUDA_SRC, functions=["avgpool"], extra_cuda_cflags=["-O3", "-lineinfo"])

PLANES = 64            # N * C
HW = 964               # 30 tiles of 32 rows and 16 tiles of 60 columns of output (960 x 960)


def make_inputs():
    torch.manual_seed(0)
    return (torch.randn(PLANES, HW, HW, device="cuda"),)


def run(x):
    return module.avgpool(x)


def reference(x):
    return torch.nn.functional.avg_pool2d(x[:, None], 5, stride=1)[:, 0]
