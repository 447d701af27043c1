"""Planted bottleneck: uncoalesced global access (element matrices stored element-major, one thread per element).

Element-by-element operator application of a finite-element model: y_e = K_e x_e for the 1,048,576
trilinear hexahedra of a 128 x 128 x 64 structured mesh, with each element's 8 x 8 stiffness matrix
precomputed and stored in bf16, element-major ([element][8][8], 128 bytes per element, 134 MB), the
nodal vector x in fp32 and the element results written as [8][element] fp32 (coalesced). One thread per
element gathers its 8 nodal values (neighbouring elements share nodes: L1/L2 hits) and reads its 64
matrix entries one bf16 at a time (nvcc 13, sm_90: 64 LDG.E.U16, 32 registers, 0 spills, full
occupancy): across a warp each load instruction touches 32 sectors in 32 different lines for 64 useful
bytes (2 of 32 bytes per sector), 16x the sectors the data needs; the same sector comes back 15 more
times for the thread's next entries, from L1 if it survived (a warp's 32 lines = 4 KB, 64 warps per SM =
256 KB, more than L1 holds). 32,768 warps = ~248 per SM x 64 loads x 32 lines = ~0.5M L1 wavefronts per
SM, ~0.3 ms at one per cycle, against ~56 us for the 172 MB the product needs (matrices once, x, y) at
3.05 TB/s. The hypothesis: UncoalescedGlobalAccess with ~2 of 32 bytes per sector, L1 busiest
(lg_throttle / long-scoreboard stalls), DRAM moving more than the needed bytes where L1 misses. Storing
the matrices entry-major ([8][8][element]) so that a warp reads 64 contiguous bytes per entry is the
fix.
"""

import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
#include <cuda_bf16.h>

__global__ void __launch_bounds__(256) hex8_apply_elem_major(const __nv_bfloat16* __restrict__ ke,
                                                             const float* __restrict__ x, float* __restrict__ y,
                                                             int nx, int ny, int nz) {
    int e = blockIdx.x * blockDim.x + threadIdx.x;
    int elems = nx * ny * nz;
    if (e >= elems) return;
    int ex = e % nx, ey = (e / nx) % ny, ez = e / (nx * ny);
    int px = nx + 1, pxy = (nx + 1) * (ny + 1);
    int n0 = (ez * (ny + 1) + ey) * px + ex;   // node (ex, ey, ez)
    int node[8] = {n0, n0 + 1, n0 + px + 1, n0 + px, n0 + pxy, n0 + pxy + 1, n0 + pxy + px + 1, n0 + pxy + px};
    float xe[8];
    #pragma unroll
    for (int j = 0; j < 8; ++j) xe[j] = x[node[j]];
    const __nv_bfloat16* k = ke + (size_t)e * 64;   // this element's 8 x 8 matrix, row-major
    #pragma unroll
    for (int i = 0; i < 8; ++i) {
        float acc = 0.f;
        #pragma unroll
        for (int j = 0; j < 8; ++j) acc = fmaf(__bfloat162float(k[i * 8 + j]), xe[j], acc);
        y[(size_t)i * elems + e] = acc;
    }
}

torch::Tensor hex8_apply(torch::Tensor ke, torch::Tensor x, int64_t nx, int64_t ny, int64_t nz) {
    int elems = nx * ny * nz;
    TORCH_CHECK(ke.numel() == (int64_t)elems * 64 && x.numel() == (nx + 1) * (ny + 1) * (nz + 1));
    auto y = torch::empty({8, elems}, x.options());
    hex8_apply_elem_major<<<(elems + 255) / 256, 256>>>(reinterpret_cast<const __nv_bfloat16*>(ke.data_ptr<at::BFloat16>()),
                                                        x.data_ptr<float>(), y.data_ptr<float>(), (int)nx, (int)ny,
                                                        (int)nz);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

module = load_inline(
    "kls_hex8_matvec_elem_major_bf16_cuda",
    cpp_sources="torch::Tensor hex8_apply(torch::Tensor ke, torch::Tensor x, int64_t nx, int64_t ny, int64_t nz);",
    cuda_sources=CUDA_SRC,
    functions=["hex8_apply"],
    extra_cuda_cflags=["-O3", "-lineinfo"],
)

NX, NY, NZ = 128, 128, 64
TOLERANCE = 1e-5  # fp32 sums of 8 products of bf16 entries (exact in fp32) and fp32 values


def element_nodes(nx, ny, nz, device):
    e = torch.arange(nx * ny * nz, device=device)
    ex, ey, ez = e % nx, (e // nx) % ny, e // (nx * ny)
    px, pxy = nx + 1, (nx + 1) * (ny + 1)
    n0 = (ez * (ny + 1) + ey) * px + ex
    offs = torch.tensor([0, 1, px + 1, px, pxy, pxy + 1, pxy + px + 1, pxy + px], device=device)
    return n0[:, None] + offs[None, :]  # [elements, 8]


def make_inputs():
    g = torch.Generator(device="cuda")
    g.manual_seed(0)
    elems = NX * NY * NZ
    # a reference Laplacian stiffness for the unit cube, scaled per element by a random conductivity
    # and perturbed a little (distorted elements), kept symmetric
    base = torch.full((8, 8), -1.0 / 12.0, device="cuda") + torch.eye(8, device="cuda") * (1.0 / 3.0 + 1.0 / 12.0)
    cond = 0.5 + torch.rand(elems, 1, 1, device="cuda", generator=g)
    noise = 0.01 * torch.randn(elems, 8, 8, device="cuda", generator=g)
    ke = (cond * base + noise + noise.transpose(1, 2)).to(torch.bfloat16).contiguous()
    x = torch.randn((NX + 1) * (NY + 1) * (NZ + 1), device="cuda", generator=g)
    return ke, x


def run(ke, x):
    return module.hex8_apply(ke, x, NX, NY, NZ)


def reference(ke, x):
    nodes = element_nodes(NX, NY, NZ, x.device)
    xe = x.double()[nodes]  # [elements, 8]
    return torch.einsum("eij,ej->ie", ke.double(), xe).float()
