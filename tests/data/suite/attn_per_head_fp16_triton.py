"""Planted bottleneck: small grid (a flash-attention forward with one program per head: 16 programs).

Non-causal attention softmax(Q K^T / sqrt(d)) V for 2 x 8 heads of 2,048 tokens, head dim 64, fp16,
written as a flash-attention forward (tl.dot on tensor cores, online softmax, nothing materialized).
The grid is one program per (batch, head): 16 programs, each walking all 16 query blocks of its head
one after another. 16 of the 132 SMs work (~1.1 GFLOP each, ~17 GFLOP in all); the other 116 idle for
the whole kernel. Every query block is independent, so the grid should be (query blocks, heads) =
16 x 16 = 256 programs (the usual flash-attention grid) and the same code would spread over all SMs.
"""
import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
B, H, S, D = 2, 8, 2048, 64
BLOCK_M, BLOCK_N = 128, 64


@triton.jit
def attn_per_head_kernel(q_ptr, k_ptr, v_ptr, o_ptr, S, qk_scale, D: tl.constexpr, BLOCK_M: tl.constexpr,
                         BLOCK_N: tl.constexpr):
    head = tl.program_id(0)  # one program per (batch, head): the query blocks are a loop, not the grid
    base = head.to(tl.int64) * S * D
    offs_d = tl.arange(0, D)
    for start_m in range(0, S, BLOCK_M):
        offs_m = start_m + tl.arange(0, BLOCK_M)
        q = tl.load(q_ptr + base + offs_m[:, None] * D + offs_d[None, :])
        m_i = tl.full([BLOCK_M], -float("inf"), tl.float32)
        l_i = tl.zeros([BLOCK_M], tl.float32)
        acc = tl.zeros([BLOCK_M, D], tl.float32)
        for start_n in range(0, S, BLOCK_N):
            offs_n = start_n + tl.arange(0, BLOCK_N)
            kt = tl.load(k_ptr + base + offs_n[None, :] * D + offs_d[:, None])  # K^T tile [D, BLOCK_N]
            s = tl.dot(q, kt) * qk_scale  # log2 domain
            m_new = tl.maximum(m_i, tl.max(s, 1))
            alpha = tl.exp2(m_i - m_new)
            p = tl.exp2(s - m_new[:, None])
            l_i = l_i * alpha + tl.sum(p, 1)
            v = tl.load(v_ptr + base + offs_n[:, None] * D + offs_d[None, :])
            acc = acc * alpha[:, None] + tl.dot(p.to(tl.float16), v)
            m_i = m_new
        acc = acc / l_i[:, None]
        tl.store(o_ptr + base + offs_m[:, None] * D + offs_d[None, :], acc.to(tl.float16))


def make_inputs():
    torch.manual_seed(0)
    q = torch.randn(B, H, S, D, device=DEVICE, dtype=torch.float16)
    k = torch.randn(B, H, S, D, device=DEVICE, dtype=torch.float16)
    v = torch.randn(B, H, S, D, device=DEVICE, dtype=torch.float16)
    return q, k, v


def run(q, k, v):
    b, h, s, d = q.shape
    assert s % BLOCK_M == 0 and s % BLOCK_N == 0
    o = torch.empty_like(q)
    qk_scale = (1.0 / d**0.5) * 1.4426950408889634  # 1/sqrt(d) * log2(e)
    attn_per_head_kernel[(b * h,)](q, k, v, o, s, qk_scale, D=d, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, num_warps=4,
                                   num_stages=2)
    return o


def reference(q, k, v):
    return torch.nn.functional.scaled_dot_product_attention(q.float(), k.float(), v.float()).half()
