"""Planted bottleneck: tensor cores unused (an NNUE evaluator's dense layers as broadcast-multiply-sum on the FMA pipe).

Batched position evaluation for a chess engine's GPU search / self-play data generation: an NNUE-style
network whose feature-transformer accumulators are already built (bf16 [positions, 512]: both
perspectives' 256-wide accumulators side by side), followed by the dense head: clipped ReLU, 512 -> 32,
clipped ReLU, 32 -> 32, clipped ReLU, 32 -> 1 (bf16 weights, fp32 out: the static evaluation).
262,144 positions, 16 per program (8 warps, 16,384 programs); each layer is written as
tl.sum(a[:, :, None] * w[None, :, :], axis=1) over fp32 operands (K chunks of 16 for the first layer),
i.e. 17.4k multiply-adds per position on the FP32 pipes with the products materialised in registers and
reduced across lanes, instead of tl.dot on bf16 tensor cores. 9.1 GFLOP; 268 MB of accumulators (~88 us
at 3.05 TB/s); ~136 us even at the FP32 FMA roof.
The hypothesis: tensor_cores_unused: tensor pipe 0%, FMA/ALU pipes and shuffles busy (SM% ~60-85%),
DRAM ~15-35%, ~0.3-0.7 ms. The fix: tl.dot on bf16 tiles (BLOCK_M >= 64, K chunks of 64) for the
512 -> 32 layer (and the small 32 -> 32 one), which leaves the kernel DRAM bound at ~0.1 ms.
"""

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
POSITIONS = 262144
L0 = 512
L1 = 32
L2 = 32
BM = 16
BK = 16
# sums of bf16 products (each product rounded to bf16 on the GPU, not in the CPU interpreter) in another order than
# the float64 reference: 2.96e-4 on the H100 (checks.json, recorded against the 1e-4 first written here)
TOLERANCE = 1e-3


@triton.jit
def nnue_dense_kernel(acc_ptr, w1_ptr, b1_ptr, w2_ptr, b2_ptr, w3_ptr, b3, out_ptr, n_pos,
                      L0: tl.constexpr, L1: tl.constexpr, L2: tl.constexpr, BM: tl.constexpr, BK: tl.constexpr):
    pid = tl.program_id(0)
    rows = pid * BM + tl.arange(0, BM)
    rmask = rows < n_pos
    ks = tl.arange(0, BK)
    n1 = tl.arange(0, L1)
    n2 = tl.arange(0, L2)
    h1 = tl.zeros([BM, L1], dtype=tl.float32)
    for k0 in range(0, L0, BK):
        a = tl.load(acc_ptr + rows[:, None].to(tl.int64) * L0 + k0 + ks[None, :], mask=rmask[:, None], other=0.0)
        a = tl.minimum(tl.maximum(a.to(tl.float32), 0.0), 1.0)                    # clipped ReLU
        w = tl.load(w1_ptr + (k0 + ks)[:, None] * L1 + n1[None, :]).to(tl.float32)  # W1 stored [L0, L1]
        h1 += tl.sum(a[:, :, None] * w[None, :, :], axis=1)
    b1 = tl.load(b1_ptr + n1).to(tl.float32)
    h1 = tl.minimum(tl.maximum(h1 + b1[None, :], 0.0), 1.0)
    w2 = tl.load(w2_ptr + n1[:, None] * L2 + n2[None, :]).to(tl.float32)
    b2 = tl.load(b2_ptr + n2).to(tl.float32)
    h2 = tl.sum(h1[:, :, None] * w2[None, :, :], axis=1) + b2[None, :]
    h2 = tl.minimum(tl.maximum(h2, 0.0), 1.0)
    w3 = tl.load(w3_ptr + n2).to(tl.float32)
    ev = tl.sum(h2 * w3[None, :], axis=1) + b3
    tl.store(out_ptr + rows, ev, mask=rmask)


def make_inputs():
    g = torch.Generator(device=DEVICE)
    g.manual_seed(0)
    acc = (0.45 + 0.35 * torch.randn(POSITIONS, L0, device=DEVICE, generator=g)).to(torch.bfloat16)
    w1 = (torch.randn(L0, L1, device=DEVICE, generator=g) / L0 ** 0.5).to(torch.bfloat16)
    b1 = (0.3 + 0.1 * torch.randn(L1, device=DEVICE, generator=g)).to(torch.bfloat16)
    w2 = (torch.randn(L1, L2, device=DEVICE, generator=g) / L1 ** 0.5).to(torch.bfloat16)
    b2 = (0.3 + 0.1 * torch.randn(L2, device=DEVICE, generator=g)).to(torch.bfloat16)
    w3 = (600.0 * torch.randn(L2, device=DEVICE, generator=g) / L2 ** 0.5).to(torch.bfloat16)   # centipawns
    return acc.contiguous(), w1.contiguous(), b1, w2.contiguous(), b2, w3


def run(acc, w1, b1, w2, b2, w3):
    n = acc.shape[0]
    out = torch.empty(n, device=acc.device, dtype=torch.float32)
    nnue_dense_kernel[(triton.cdiv(n, BM),)](acc, w1, b1, w2, b2, w3, 12.0, out, n,
                                             L0=L0, L1=L1, L2=L2, BM=BM, BK=BK, num_warps=8)
    return out


def reference(acc, w1, b1, w2, b2, w3):
    h = acc.double().clamp(0.0, 1.0)
    h = (h @ w1.double() + b1.double()).clamp(0.0, 1.0)
    h = (h @ w2.double() + b2.double()).clamp(0.0, 1.0)
    return (h @ w3.double() + 12.0).float()
