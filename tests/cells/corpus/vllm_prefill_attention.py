"""Causal prefill attention over packed variable-length sequences, one program per (sequence, head, query block) (vLLM).

Source: vllm-project/vllm vllm/v1/attention/ops/triton_prefill_attention.py and vllm/utils/math_utils.py (as
shipped in the PyPI wheel vllm 0.33.0),
https://github.com/vllm-project/vllm/blob/main/vllm/v1/attention/ops/triton_prefill_attention.py
Licence: Apache-2.0, Copyright contributors to the vLLM project, Copyright 2023-2024 SGLang Team (the file's
notice follows)
Stripped: current_platform (block size 128 on CUDA devices of capability 8.0 and up, as get_block_size chooses
there; the narrow KV tile is for ROCm's RDNA only); launch as in context_attention_fwd(q, k, v, o, b_start_loc,
b_seq_len, max_input_len) with causal masking, no sliding window, no sinks.
"""

# SPDX-License-Identifier: Apache-2.0
# SPDX-FileCopyrightText: Copyright contributors to the vLLM project

# Adapted from
# https://github.com/sgl-project/sglang/blob/97cb762bb65ebf05025eb342de03c184660427a3/python/sglang/srt/layers/attention/triton_ops/prefill_attention.py
# Changes:
# - Add support for sliding window attention

# Copyright 2023-2024 SGLang Team
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.
# ==============================================================================
"""Memory-efficient attention for prefill.
It supports page size = 1.
"""

# Adapted from

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
DTYPE = torch.bfloat16 if DEVICE == "cuda" else torch.float32
# (sequences, longest sequence, q heads, kv heads, head_dim)
SHAPES = [(16, 4096, 32, 8, 128), (64, 1024, 16, 16, 64)] if DEVICE == "cuda" else [(2, 20, 4, 2, 16), (3, 9, 2, 2, 16)]

RCP_LN2 = 1.4426950408889634  # vllm/utils/math_utils.py: 1 / ln(2)


def _prefer_narrow_kv_tile() -> bool:
    """RDNA3/RDNA4 prefer a narrower KV tile than the shared default."""
    return False


@triton.jit
def _fwd_kernel(
    Q,
    K,
    V,
    Sinks,
    sm_scale,
    B_Start_Loc,
    B_Seqlen,
    Out,
    stride_qbs,
    stride_qh,
    stride_kbs,
    stride_kh,
    stride_vbs,
    stride_vh,
    stride_obs,
    stride_oh,
    kv_group_num: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_DMODEL: tl.constexpr,
    BLOCK_N: tl.constexpr,
    IS_CAUSAL: tl.constexpr,
    SLIDING_WINDOW_Q: tl.constexpr,
    SLIDING_WINDOW_K: tl.constexpr,
    SINKS_BIAS_KEY0: tl.constexpr,
    USE_SINKS: tl.constexpr,
    Lk: tl.constexpr,
):
    cur_batch = tl.program_id(0)
    cur_head = tl.program_id(1)
    start_m = tl.program_id(2)

    cur_kv_head = cur_head // kv_group_num

    cur_batch_seq_len = tl.load(B_Seqlen + cur_batch)
    cur_batch_in_all_start_index = tl.load(B_Start_Loc + cur_batch)

    block_start_loc = BLOCK_M * start_m

    # initialize offsets
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, BLOCK_DMODEL)
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    off_q = (
        (cur_batch_in_all_start_index + offs_m[:, None]) * stride_qbs
        + cur_head * stride_qh
        + offs_d[None, :]
    )
    off_k = offs_n[None, :] * stride_kbs + cur_kv_head * stride_kh + offs_d[:, None]
    off_v = offs_n[:, None] * stride_vbs + cur_kv_head * stride_vh + offs_d[None, :]

    mask_d = offs_d < Lk

    q = tl.load(
        Q + off_q,
        mask=(offs_m[:, None] < cur_batch_seq_len) & (mask_d[None, :]),
        other=0.0,
    )

    k_ptrs = K + off_k
    v_ptrs = V + off_v

    # initialize pointer to m and l
    if USE_SINKS:
        sink = tl.load(Sinks + cur_head) * 1.4426950408889634
        if SINKS_BIAS_KEY0:
            # Sinks bias the logit of key 0, so the softmax starts empty and
            # normalizes over the biased scores as usual.
            m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
            l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
        else:
            # Sinks are a null logit that only inflates the denominator.
            m_i = tl.full([BLOCK_M], sink, dtype=tl.float32)
            l_i = tl.full([BLOCK_M], 1.0, dtype=tl.float32)
    else:
        m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
        l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, BLOCK_DMODEL], dtype=tl.float32)

    block_mask = tl.where(block_start_loc < cur_batch_seq_len, 1, 0)

    # Calculate the end position for attention computation
    end_n = cur_batch_seq_len

    # Apply causal attention pruning and sliding window attention pruning
    end_n = tl.minimum(end_n, (start_m + 1) * BLOCK_M) if IS_CAUSAL else end_n

    # Calculate the start position for backward sliding window.
    # Keys outside the window are fully masked below, so skip those blocks
    # rather than loading them and discarding the result. Without this a
    # windowed pass still costs O(seq_len^2).
    start_n_limit = 0
    if SLIDING_WINDOW_Q > 0:
        first_needed = start_m * BLOCK_M - SLIDING_WINDOW_Q
        start_n_limit = tl.maximum(0, (first_needed // BLOCK_N) * BLOCK_N)
    if SLIDING_WINDOW_K > 0:
        last_needed = (start_m + 1) * BLOCK_M - 1 + SLIDING_WINDOW_K
        end_n = tl.minimum(end_n, last_needed + 1)
    end_n_limit = block_mask * end_n

    for start_n in range(start_n_limit, end_n_limit, BLOCK_N):
        # -- prepare attention mask ----
        # Position indices in the sequence
        pos_q = offs_m[:, None]  # Query positions [BLOCK_M, 1]
        pos_k = start_n + offs_n[None, :]  # Key positions [1, BLOCK_N]

        # Valid sequence mask
        mask = pos_k < cur_batch_seq_len
        # Causal mask
        if IS_CAUSAL:
            mask &= pos_q >= pos_k

        # Bidirectional sliding window masks
        sliding_mask_q = (
            pos_q - pos_k <= SLIDING_WINDOW_Q if SLIDING_WINDOW_Q > 0 else None
        )
        sliding_mask_k = (
            pos_k - pos_q <= SLIDING_WINDOW_K if SLIDING_WINDOW_K > 0 else None
        )
        if sliding_mask_q is not None:
            mask &= sliding_mask_q
        if sliding_mask_k is not None:
            mask &= sliding_mask_k

        start_n = tl.multiple_of(start_n, BLOCK_N)
        # -- compute qk ----
        k = tl.load(
            k_ptrs + (cur_batch_in_all_start_index + start_n) * stride_kbs,
            mask=(pos_k < cur_batch_seq_len) & (mask_d[:, None]),
            other=0.0,
        )

        qk = tl.dot(q, k)
        qk = tl.where(mask, qk * sm_scale, -1.0e8)
        if USE_SINKS and SINKS_BIAS_KEY0:
            qk = tl.where(mask & (pos_k == 0), qk + sink, qk)
        m_ij = tl.maximum(m_i, tl.max(qk, 1))
        qk -= m_ij[:, None]
        p = tl.math.exp2(qk)
        l_ij = tl.sum(p, 1)

        # -- update m_i and l_i
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + l_ij
        # -- update output accumulator --
        acc = acc * alpha[:, None]
        # update acc
        v = tl.load(
            v_ptrs + (cur_batch_in_all_start_index + start_n) * stride_vbs,
            mask=((start_n + offs_n[:, None]) < cur_batch_seq_len) & (mask_d[None, :]),
            other=0.0,
        )
        p = p.to(v.dtype)
        acc = tl.dot(p, v, acc)
        # update m_i
        m_i = m_ij

    acc = acc / l_i[:, None]
    off_o = (
        (cur_batch_in_all_start_index + offs_m[:, None]) * stride_obs
        + cur_head * stride_oh
        + offs_d[None, :]
    )
    out_ptrs = Out + off_o
    tl.store(
        out_ptrs, acc, mask=(offs_m[:, None] < cur_batch_seq_len) & (mask_d[None, :])
    )


def get_block_size(dtype: torch.dtype) -> int:
    if dtype == torch.float32:
        return 32
    elif torch.cuda.is_available() and torch.cuda.get_device_capability() >= (8, 0):
        return 128
    else:
        return 64


def context_attention_fwd(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    o: torch.Tensor,
    b_start_loc: torch.Tensor,
    b_seq_len: torch.Tensor,
    max_input_len: int,
    is_causal: bool = True,
    softmax_scale: float | None = None,
    sliding_window_q: int | None = None,
    sliding_window_k: int | None = None,
    sinks: torch.Tensor | None = None,
    sinks_bias_key0: bool = False,
):
    """q, k, v: [b * s, head, head_dim]
    b_start_loc: [b]
    b_seq_len: [b]
    out: [b * s, head, head_dim]
    """
    Lq, Lk, _ = q.shape[-1], k.shape[-1], v.shape[-1]
    BLOCK = get_block_size(q.dtype)
    if Lk >= 512:
        BLOCK = min(BLOCK, 32)

    sm_scale = 1.0 / (Lq**0.5) if softmax_scale is None else softmax_scale
    # rescale with 1/ln(2) for triton exp2
    sm_scale *= RCP_LN2

    batch, head = b_seq_len.shape[0], q.shape[1]
    kv_group_num = q.shape[1] // k.shape[1]
    if sinks is not None:
        assert sinks.shape[0] == head, "Sinks must be num_query_heads size"

    grid = (batch, head, triton.cdiv(max_input_len, BLOCK))
    num_warps = 4 if Lk <= 64 else 8

    # BLOCK_M, num_warps and num_stages stay at the shared defaults; min()
    # leaves dtypes whose default tile is already 32, such as float32, alone.
    BLOCK_N = min(BLOCK, 32) if _prefer_narrow_kv_tile() else BLOCK

    sliding_window_q = sliding_window_q if sliding_window_q is not None else 0
    sliding_window_k = sliding_window_k if sliding_window_k is not None else 0

    _fwd_kernel[grid](
        q,
        k,
        v,
        sinks if sinks is not None else q,
        sm_scale,
        b_start_loc,
        b_seq_len,
        o,
        q.stride(0),
        q.stride(1),
        k.stride(0),
        k.stride(1),
        v.stride(0),
        v.stride(1),
        o.stride(0),
        o.stride(1),
        kv_group_num=kv_group_num,
        BLOCK_M=BLOCK,
        BLOCK_DMODEL=triton.next_power_of_2(Lk),
        BLOCK_N=BLOCK_N,
        IS_CAUSAL=is_causal,
        SLIDING_WINDOW_Q=sliding_window_q,
        SLIDING_WINDOW_K=sliding_window_k,
        USE_SINKS=sinks is not None,
        SINKS_BIAS_KEY0=sinks_bias_key0,
        num_warps=num_warps,
        num_stages=1,
        Lk=Lk,
    )


# --- the cell's convention ---
def make_inputs(sequences=16, longest=4096, q_heads=32, kv_heads=8, head_dim=128):
    b_seq_len = torch.randint(longest // 2, longest + 1, (sequences,), device=DEVICE, dtype=torch.int32)
    b_seq_len[0] = longest
    b_start_loc = (torch.cumsum(b_seq_len, 0) - b_seq_len).to(torch.int32)
    total = int(b_seq_len.sum())
    q = torch.randn(total, q_heads, head_dim, device=DEVICE, dtype=DTYPE)
    k = torch.randn(total, kv_heads, head_dim, device=DEVICE, dtype=DTYPE)
    v = torch.randn(total, kv_heads, head_dim, device=DEVICE, dtype=DTYPE)
    return q, k, v, b_start_loc, b_seq_len


def run(q, k, v, b_start_loc, b_seq_len):
    o = torch.empty_like(q)
    context_attention_fwd(q, k, v, o, b_start_loc, b_seq_len, int(b_seq_len.max()))
    return o


def torch_run(q, k, v, b_start_loc, b_seq_len):
    group = q.shape[1] // k.shape[1]
    out = torch.empty_like(q)
    for s, n in zip(b_start_loc.tolist(), b_seq_len.tolist()):
        qs = q[s : s + n].float().transpose(0, 1)  # (heads, n, d)
        ks = k[s : s + n].float().repeat_interleave(group, dim=1).transpose(0, 1)
        vs = v[s : s + n].float().repeat_interleave(group, dim=1).transpose(0, 1)
        o = torch.nn.functional.scaled_dot_product_attention(qs, ks, vs, is_causal=True)
        out[s : s + n] = o.transpose(0, 1).to(q.dtype)
    return out
