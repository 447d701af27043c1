"""Planted bottleneck: tensor cores unused (a batched Q K^T contact head done as rank-1 FMA updates).

Residue-contact head of a protein language model (ESM-style contact prediction): per protein, query
and key projections of the residue embeddings Q, K [32 proteins, 1,024 residues, 128] fp16, contact
probability P = sigmoid(Q K^T / sqrt(128)) [32, 1,024, 1,024] fp16 (67 MB). Each program computes a
64 x 64 tile of one protein with a [64, 64] fp32 accumulator updated by 128 rank-1 outer products
(acc += q[:, k, None] * k[None, :, k]: a column of Q and of K per step, 256 bytes apart, L1-cached),
so the 4.3 GFLOP run on the FMA pipe; 8,192 programs of 4 warps.
The hypothesis: tensor_cores_unused: FMA pipe busy (~50-80%), tensor pipe 0, SM% high, DRAM low
(~84 MB), ~0.3-0.7 ms where tl.dot on the fp16 tiles (tensor cores) would take ~20-40 us.
"""

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
B = 32
L = 1024
D = 128
BM = 64
BN = 64


@triton.jit
def contact_logits_kernel(q_ptr, k_ptr, p_ptr, seqlen, scale, D: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    pb = tl.program_id(2)
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.program_id(1) * BN + tl.arange(0, BN)
    rm = rows < seqlen
    cm = cols < seqlen
    qb = q_ptr + pb * seqlen * D
    kb = k_ptr + pb * seqlen * D
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for d in range(D):
        a = tl.load(qb + rows * D + d, mask=rm, other=0.0).to(tl.float32)
        b = tl.load(kb + cols * D + d, mask=cm, other=0.0).to(tl.float32)
        acc += a[:, None] * b[None, :]
    prob = 1.0 / (1.0 + tl.exp(-acc * scale))
    out = p_ptr + pb * seqlen * seqlen + rows[:, None] * seqlen + cols[None, :]
    tl.store(out, prob.to(tl.float16), mask=rm[:, None] & cm[None, :])


def make_inputs():
    g = torch.Generator(device=DEVICE)
    g.manual_seed(0)
    q = torch.randn(B, L, D, device=DEVICE, generator=g) * 0.5
    k = torch.randn(B, L, D, device=DEVICE, generator=g) * 0.5
    return q.to(torch.float16).contiguous(), k.to(torch.float16).contiguous()


def run(q, k):
    nb, seqlen, d = q.shape
    p = torch.empty((nb, seqlen, seqlen), device=q.device, dtype=torch.float16)
    grid = (triton.cdiv(seqlen, BM), triton.cdiv(seqlen, BN), nb)
    contact_logits_kernel[grid](q, k, p, seqlen, d ** -0.5, D=d, BM=BM, BN=BN, num_warps=4)
    return p


def reference(q, k):
    logits = torch.matmul(q.double(), k.double().transpose(1, 2)) * q.shape[2] ** -0.5
    return torch.sigmoid(logits).to(torch.float16)
