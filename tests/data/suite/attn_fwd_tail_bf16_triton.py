"""Planted bottleneck: tail effect (a flash-attention forward whose 198 programs make 1.5 waves on 132 SMs).

Cross-attention forward (flash-attention: tl.dot on tensor cores, online softmax) for 2 x 11 heads,
1,152 queries attending to 8,192 keys, head dim 128, bf16. 128-query blocks, 8 warps, 3 stages:
a program holds a 128 x 128 fp32 accumulator in registers (145 registers x 256 threads: more than
half of the register file) and pipelines K/V tiles through 128 KB of shared memory (triton 3.6,
sm_90), so one program runs per SM.
The grid is 9 query blocks x 22 heads = 198 equal programs (each ~0.54 GFLOP): 132 in the first
wave, then 66 on half of the SMs while the other half idle, for as long as a full wave takes.
Smaller query blocks (a grid that is many waves), a split over keys, or a persistent schedule
remove the idle half wave.
"""
import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
B, H, SQ, SK, D = 2, 11, 1152, 8192, 128
DTYPE = torch.bfloat16
BLOCK_M, BLOCK_N, WARPS, STAGES = 128, 64, 8, 3


@triton.jit
def attn_fwd_kernel(q_ptr, k_ptr, v_ptr, o_ptr, SQ, SK, qk_scale, D: tl.constexpr, BLOCK_M: tl.constexpr,
                    BLOCK_N: tl.constexpr):
    start_m = tl.program_id(0) * BLOCK_M
    head = tl.program_id(1).to(tl.int64)
    q_base = head * SQ * D
    kv_base = head * SK * D
    offs_m = start_m + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, D)
    q = tl.load(q_ptr + q_base + offs_m[:, None] * D + offs_d[None, :])
    m_i = tl.full([BLOCK_M], -float("inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, D], tl.float32)
    for start_n in range(0, SK, BLOCK_N):
        offs_n = start_n + tl.arange(0, BLOCK_N)
        kt = tl.load(k_ptr + kv_base + offs_n[None, :] * D + offs_d[:, None])  # K^T tile [D, BLOCK_N]
        s = tl.dot(q, kt) * qk_scale  # log2 domain
        m_new = tl.maximum(m_i, tl.max(s, 1))
        alpha = tl.exp2(m_i - m_new)
        p = tl.exp2(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(v_ptr + kv_base + offs_n[:, None] * D + offs_d[None, :])
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new
    acc = acc / l_i[:, None]
    tl.store(o_ptr + q_base + offs_m[:, None] * D + offs_d[None, :], acc.to(o_ptr.dtype.element_ty))


def make_inputs():
    torch.manual_seed(0)
    q = torch.randn(B, H, SQ, D, device=DEVICE, dtype=DTYPE)
    k = torch.randn(B, H, SK, D, device=DEVICE, dtype=DTYPE)
    v = torch.randn(B, H, SK, D, device=DEVICE, dtype=DTYPE)
    return q, k, v


def run(q, k, v):
    b, h, sq, d = q.shape
    sk = k.shape[2]
    assert sq % BLOCK_M == 0 and sk % BLOCK_N == 0
    o = torch.empty_like(q)
    qk_scale = (1.0 / d**0.5) * 1.4426950408889634  # 1/sqrt(d) * log2(e)
    grid = (sq // BLOCK_M, b * h)  # 9 x 22 = 198 programs, one per SM at a time: 1.5 waves
    attn_fwd_kernel[grid](q, k, v, o, sq, sk, qk_scale, D=d, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, num_warps=WARPS,
                          num_stages=STAGES)
    return o


def reference(q, k, v):
    return torch.nn.functional.scaled_dot_product_attention(q.float(), k.float(), v.float()).to(q.dtype)
