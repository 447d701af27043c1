"""Planted bottleneck: local memory (a per-thread array of link frames indexed by the kinematic tree's parent table).

Forward kinematics of a 24-joint humanoid (SMPL's kinematic tree: pelvis, legs, spine, neck, head, arms;
one revolute joint per link about its local z axis, fixed link offsets) for 1,048,576 sampled
configurations, as a motion-planning or pose-prior batch does: joint angles [24, B] fp32 (100 MB in),
world positions of every joint [24, 3, B] fp32 (302 MB out), one configuration per thread. Each thread
keeps `float W[24][12]` (the 3x4 world frame of every link, 1,152 B) and, for link j, reads its parent's
frame W[parent[j]] with parent[] loaded from global memory at run time: the array cannot live in
registers, so nvcc puts it on the stack and each link is 12 local loads + 12 local stores (plus the
sincosf): 576 local accesses per thread, 2.4 GB of local traffic for the 0.4 GB the result needs. The
accesses are per-lane interleaved (coalesced, the tree is the same for all lanes), but 2,048 resident
threads x 1,152 B = 2.4 MB of frames per SM, 9x the L1, so the traffic spills on to L2 (and DRAM).
The hypothesis: local load/store traffic dominating L1/L2 (ncu's spill counters may read 0: an array
indexed at run time, not a spill), ~0.4-1 ms against ~130 us for the bytes. The fix: keep only the
current chain's frames (a depth-first order with an explicit small stack of ancestors) or unroll over a
compile-time tree so the frames live in registers.
"""

import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>

#define MAXJ 24

__global__ void __launch_bounds__(256) fk_frames_local(const float* __restrict__ q, const int* __restrict__ parent,
                                                       const float* __restrict__ off, float* __restrict__ pos,
                                                       int n, int nj) {
    int b = blockIdx.x * blockDim.x + threadIdx.x;   // one configuration per thread
    if (b >= n) return;
    float W[MAXJ][12];                                // row-major 3x3 rotation, then translation
    for (int j = 0; j < nj; ++j) {
        int p = parent[j];
        float R0, R1, R2, R3, R4, R5, R6, R7, R8, tx, ty, tz;
        if (p < 0) {
            R0 = 1.f; R1 = 0.f; R2 = 0.f; R3 = 0.f; R4 = 1.f; R5 = 0.f; R6 = 0.f; R7 = 0.f; R8 = 1.f;
            tx = 0.f; ty = 0.f; tz = 0.f;
        } else {
            R0 = W[p][0]; R1 = W[p][1]; R2 = W[p][2]; R3 = W[p][3]; R4 = W[p][4]; R5 = W[p][5];
            R6 = W[p][6]; R7 = W[p][7]; R8 = W[p][8]; tx = W[p][9]; ty = W[p][10]; tz = W[p][11];
        }
        float ox = off[3 * j], oy = off[3 * j + 1], oz = off[3 * j + 2];
        // world translation of link j: parent's R * offset + parent's t
        float nx = R0 * ox + R1 * oy + R2 * oz + tx;
        float ny = R3 * ox + R4 * oy + R5 * oz + ty;
        float nz = R6 * ox + R7 * oy + R8 * oz + tz;
        float s, c;
        sincosf(q[(size_t)j * n + b], &s, &c);
        // R_j = R_p * Rz(q): column 0 <- c col0 + s col1, column 1 <- -s col0 + c col1
        W[j][0] = c * R0 + s * R1; W[j][1] = c * R1 - s * R0; W[j][2] = R2;
        W[j][3] = c * R3 + s * R4; W[j][4] = c * R4 - s * R3; W[j][5] = R5;
        W[j][6] = c * R6 + s * R7; W[j][7] = c * R7 - s * R6; W[j][8] = R8;
        W[j][9] = nx; W[j][10] = ny; W[j][11] = nz;
        pos[((size_t)j * 3 + 0) * n + b] = nx;
        pos[((size_t)j * 3 + 1) * n + b] = ny;
        pos[((size_t)j * 3 + 2) * n + b] = nz;
    }
}

torch::Tensor fk_frames(torch::Tensor q, torch::Tensor parent, torch::Tensor off) {
    TORCH_CHECK(q.dim() == 2 && q.scalar_type() == torch::kFloat && q.is_contiguous());
    TORCH_CHECK(parent.scalar_type() == torch::kInt && off.scalar_type() == torch::kFloat && off.is_contiguous());
    int nj = q.size(0), n = q.size(1);
    TORCH_CHECK(nj <= MAXJ && parent.numel() == nj && off.numel() == 3 * nj);
    auto pos = torch::empty({nj, 3, n}, q.options());
    fk_frames_local<<<(n + 255) / 256, 256>>>(q.data_ptr<float>(), parent.data_ptr<int>(), off.data_ptr<float>(),
                                              pos.data_ptr<float>(), n, nj);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return pos;
}
"""

module = load_inline(
    "kls_fk_humanoid_frames_local_fp32_cuda",
    cpp_sources="torch::Tensor fk_frames(torch::Tensor q, torch::Tensor parent, torch::Tensor off);",
    cuda_sources=CUDA_SRC,
    functions=["fk_frames"],
    extra_cuda_cflags=["-O3", "-lineinfo"],
)

B = 1 << 20
# SMPL's kinematic tree (parent of each of the 24 joints; -1 = root)
PARENTS = [-1, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 9, 9, 12, 13, 14, 16, 17, 18, 19, 20, 21]


def make_inputs():
    g = torch.Generator(device="cuda")
    g.manual_seed(0)
    nj = len(PARENTS)
    q = (torch.rand(nj, B, device="cuda", generator=g) * 2.0 - 1.0) * 1.5          # rad
    parent = torch.tensor(PARENTS, device="cuda", dtype=torch.int32)
    off = (torch.rand(nj, 3, device="cuda", generator=g) - 0.5) * 0.4              # m, link offsets
    off[0] = 0.0
    return q.contiguous(), parent, off.contiguous()


def run(q, parent, off):
    return module.fk_frames(q, parent, off)


def reference(q, parent, off):
    nj, n = q.shape
    qd, od = q.double(), off.double()
    R = [None] * nj
    t = [None] * nj
    out = torch.empty(nj, 3, n, device=q.device, dtype=torch.float64)
    par = parent.tolist()
    for j in range(nj):
        p = par[j]
        if p < 0:
            Rp = torch.eye(3, device=q.device, dtype=torch.float64).expand(n, 3, 3)
            tp = torch.zeros(n, 3, device=q.device, dtype=torch.float64)
        else:
            Rp, tp = R[p], t[p]
        t[j] = Rp @ od[j] + tp
        c, s = torch.cos(qd[j]), torch.sin(qd[j])
        Rz = torch.zeros(n, 3, 3, device=q.device, dtype=torch.float64)
        Rz[:, 0, 0], Rz[:, 0, 1], Rz[:, 1, 0], Rz[:, 1, 1], Rz[:, 2, 2] = c, -s, s, c, 1.0
        R[j] = Rp @ Rz
        out[j] = t[j].t()
    return out.float()
