"""Planted bottleneck: small grid (one block per system: 16 blocks of a backward Riccati recursion on 132 SMs).

The backward pass of iterative LQR for a small fleet: 16 legged / aerial robots, each linearised along
its current trajectory (32 states, 8 inputs, a 256-step horizon: A_k fp32 [16, 256, 32, 32], B_k
[16, 256, 32, 8]), time-varying feedback gains from the discrete Riccati recursion
S = R + B'PB, K = S^-1 B'PA, P <- Q + A'PA - A'PB K, P_N = Q; out K_k fp32 [16, 256, 8, 32].
The recursion is sequential in k, so the author gave each robot one block of 256 threads that keeps
P, A_k, B_k and the products in shared memory (padded, conflict-free) and walks the horizon:
per step ~100k multiply-adds spread over the block, an 8 x 8 Cholesky by one thread and 32 column solves,
and five __syncthreads. 16 blocks: 16 SMs work, 116 idle.
The hypothesis: small_grid: ncu 'Small Grid' (16 blocks for 132 SMs, 0.04 waves at 3 blocks per SM),
SM% ~3-10% over the device (the busy SMs barrier / latency limited), DRAM ~0-2%, ~1-2 ms. The fix: put more robots
(or several trajectories / line-search candidates per robot) in the launch, or split one recursion over a
thread-block cluster; batched small-matrix kernels for all systems at once per step.
"""

import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>

#define NS 32
#define NU 8
#define RT 256

__global__ void __launch_bounds__(RT) lqr_riccati_backward(const float* __restrict__ A, const float* __restrict__ B,
                                                           const float* __restrict__ Q, const float* __restrict__ R,
                                                           float* __restrict__ K_out, int horizon) {
    __shared__ float P[NS][NS + 1];
    __shared__ float As[NS][NS + 1];
    __shared__ float Bs[NS][NU + 1];
    __shared__ float PA[NS][NS + 1];
    __shared__ float PB[NS][NU + 1];
    __shared__ float APB[NS][NU + 1];
    __shared__ float S[NU][NU + 1];
    __shared__ float G[NU][NS + 1];          // B'PA, then K
    int sys = blockIdx.x, tid = threadIdx.x;
    const float* Qs = Q + (size_t)sys * NS * NS;
    const float* Rs = R + (size_t)sys * NU * NU;
    for (int e = tid; e < NS * NS; e += RT) P[e / NS][e % NS] = Qs[e];
    for (int k = horizon - 1; k >= 0; --k) {
        const float* Ak = A + ((size_t)sys * horizon + k) * NS * NS;
        const float* Bk = B + ((size_t)sys * horizon + k) * NS * NU;
        for (int e = tid; e < NS * NS; e += RT) As[e / NS][e % NS] = Ak[e];
        for (int e = tid; e < NS * NU; e += RT) Bs[e / NU][e % NU] = Bk[e];
        __syncthreads();
        for (int e = tid; e < NS * NS + NS * NU; e += RT) {             // PA = P A, PB = P B
            if (e < NS * NS) {
                int i = e / NS, j = e % NS;
                float acc = 0.0f;
#pragma unroll 8
                for (int l = 0; l < NS; ++l) acc += P[i][l] * As[l][j];
                PA[i][j] = acc;
            } else {
                int f = e - NS * NS, i = f / NU, j = f % NU;
                float acc = 0.0f;
#pragma unroll 8
                for (int l = 0; l < NS; ++l) acc += P[i][l] * Bs[l][j];
                PB[i][j] = acc;
            }
        }
        __syncthreads();
        for (int e = tid; e < NU * NU + NU * NS + NS * NU; e += RT) {   // S = R + B'PB, G = B'PA, APB = A'PB
            if (e < NU * NU) {
                int i = e / NU, j = e % NU;
                float acc = Rs[e];
                for (int l = 0; l < NS; ++l) acc += Bs[l][i] * PB[l][j];
                S[i][j] = acc;
            } else if (e < NU * NU + NU * NS) {
                int f = e - NU * NU, i = f / NS, j = f % NS;
                float acc = 0.0f;
                for (int l = 0; l < NS; ++l) acc += Bs[l][i] * PA[l][j];
                G[i][j] = acc;
            } else {
                int f = e - NU * NU - NU * NS, i = f / NU, j = f % NU;
                float acc = 0.0f;
                for (int l = 0; l < NS; ++l) acc += As[l][i] * PB[l][j];
                APB[i][j] = acc;
            }
        }
        __syncthreads();
        if (tid < 32) {                                                  // K = S^-1 G (Cholesky, 32 column solves)
            if (tid == 0) {
                for (int j = 0; j < NU; ++j) {
                    float d = S[j][j];
                    for (int m = 0; m < j; ++m) d -= S[j][m] * S[j][m];
                    d = sqrtf(d);
                    S[j][j] = d;
                    for (int i = j + 1; i < NU; ++i) {
                        float v = S[i][j];
                        for (int m = 0; m < j; ++m) v -= S[i][m] * S[j][m];
                        S[i][j] = v / d;
                    }
                }
            }
            __syncwarp();
            float y[NU];
#pragma unroll
            for (int i = 0; i < NU; ++i) {
                float v = G[i][tid];
#pragma unroll
                for (int m = 0; m < i; ++m) v -= S[i][m] * y[m];
                y[i] = v / S[i][i];
            }
#pragma unroll
            for (int i = NU - 1; i >= 0; --i) {
                float v = y[i];
#pragma unroll
                for (int m = i + 1; m < NU; ++m) v -= S[m][i] * y[m];
                y[i] = v / S[i][i];
            }
#pragma unroll
            for (int i = 0; i < NU; ++i) G[i][tid] = y[i];
        }
        __syncthreads();
        float* Kk = K_out + ((size_t)sys * horizon + k) * NU * NS;
        for (int e = tid; e < NU * NS; e += RT) Kk[e] = G[e / NS][e % NS];
        for (int e = tid; e < NS * NS; e += RT) {                        // P = Q + A'PA - A'PB K
            int i = e / NS, j = e % NS;
            float acc = Qs[e];
#pragma unroll 8
            for (int l = 0; l < NS; ++l) acc += As[l][i] * PA[l][j];
#pragma unroll
            for (int u = 0; u < NU; ++u) acc -= APB[i][u] * G[u][j];
            P[i][j] = acc;
        }
        __syncthreads();
    }
}

torch::Tensor riccati_gains(torch::Tensor A, torch::Tensor B, torch::Tensor Q, torch::Tensor R) {
    TORCH_CHECK(A.is_cuda() && A.scalar_type() == torch::kFloat && A.is_contiguous() && A.dim() == 4);
    TORCH_CHECK(A.size(2) == NS && A.size(3) == NS && B.size(2) == NS && B.size(3) == NU && B.is_contiguous());
    TORCH_CHECK(Q.is_contiguous() && R.is_contiguous() && Q.size(1) == NS && R.size(1) == NU);
    int sys = A.size(0), horizon = A.size(1);
    auto K = torch::empty({sys, horizon, NU, NS}, A.options());
    lqr_riccati_backward<<<sys, RT>>>(A.data_ptr<float>(), B.data_ptr<float>(), Q.data_ptr<float>(), R.data_ptr<float>(),
                                      K.data_ptr<float>(), horizon);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return K;
}
"""

module = load_inline(
    "kls_lqr_riccati_few_systems_fp32_cuda",
    cpp_sources="torch::Tensor riccati_gains(torch::Tensor A, torch::Tensor B, torch::Tensor Q, torch::Tensor R);",
    cuda_sources=CUDA_SRC,
    functions=["riccati_gains"],
    extra_cuda_cflags=["-O3", "-lineinfo"],
)

SYSTEMS = 16
HORIZON = 256
NSTATE = 32
NINPUT = 8
TOLERANCE = 1e-4  # fp32 recursion over 256 steps against float64


def make_inputs():
    g = torch.Generator(device="cuda")
    g.manual_seed(0)
    dev = "cuda"
    eye = torch.eye(NSTATE, device=dev)
    base = 0.08 * torch.randn(SYSTEMS, 1, NSTATE, NSTATE, device=dev, generator=g) / NSTATE ** 0.5
    drift = 0.02 * torch.randn(SYSTEMS, HORIZON, NSTATE, NSTATE, device=dev, generator=g) / NSTATE ** 0.5
    A = eye + base + drift                                                    # linearised dynamics along the path
    B = 0.1 * torch.randn(SYSTEMS, HORIZON, NSTATE, NINPUT, device=dev, generator=g)
    qd = 0.5 + torch.rand(SYSTEMS, NSTATE, device=dev, generator=g)
    Q = torch.diag_embed(qd)
    rd = 0.05 + 0.1 * torch.rand(SYSTEMS, NINPUT, device=dev, generator=g)
    R = torch.diag_embed(rd)
    return A.contiguous(), B.contiguous(), Q.contiguous(), R.contiguous()


def run(A, B, Q, R):
    return module.riccati_gains(A, B, Q, R)


def reference(A, B, Q, R):
    A, B, Q, R = A.double(), B.double(), Q.double(), R.double()
    systems, horizon = A.shape[:2]
    K = torch.empty(systems, horizon, B.shape[3], A.shape[2], device=A.device, dtype=torch.float64)
    P = Q.clone()
    for k in range(horizon - 1, -1, -1):
        a, b = A[:, k], B[:, k]
        pa, pb = P @ a, P @ b
        S = R + b.transpose(1, 2) @ pb
        G = b.transpose(1, 2) @ pa
        K[:, k] = torch.linalg.solve(S, G)
        P = Q + a.transpose(1, 2) @ pa - (a.transpose(1, 2) @ pb) @ K[:, k]
    return K.float()
