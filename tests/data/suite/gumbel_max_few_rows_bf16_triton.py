"""Planted bottleneck: small grid (temperature sampling for a batch of 16 sequences, one program per vocabulary row).

One decoding step of an LLM with a 262,144-token vocabulary and batch 16: each row of bf16 logits is
sampled with temperature by the Gumbel-max trick, token = argmax(l / T - log(-log(u))), with u from a
counter-based integer hash of (row, token) (no noise tensor to read). The natural code gives each row
one program (4 warps) that walks its 512 KB row in 2,048-token chunks, keeping a running maximum per
lane, then reduces across lanes (triton 3.6, sm_90: 64 registers, 0 spills, ~75 SASS instructions per
token, 25 of them FFMA for the two accurate logarithms). 16 programs for 132 SMs: 116 SMs idle, and each
busy SM has one warp per scheduler for ~1,200 instructions per chunk plus the unhidden load of the next
chunk: 128 chunks x ~1.2-1.5 us = ~0.15-0.2 ms for 8.4 MB that DRAM streams in ~3 us, and 16.8M tokens x
~75 instructions that all 132 SMs would issue in ~45 us. The hypothesis: ncu's Small Grid (grid 16 < 132
SMs, LaunchConfiguration est. ~88%), SM% and DRAM% in single digits. Splitting each row over many
programs (each returning its chunk's best score and index, then a tiny second reduction) is the fix.
"""

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
ROWS = 16
VOCAB = 1 << 18
BLOCK = 2048
TEMPERATURE = 0.7
SEED = 0x2545F491
MASK = 0xFFFFFFFF


@triton.jit
def _lowbias32(x):  # integer hash of a uint32 counter
    x ^= x >> 16
    x *= 0x7FEB352D
    x ^= x >> 15
    x *= 0x846CA68B
    x ^= x >> 16
    return x


@triton.jit
def gumbel_max_row_kernel(logit_ptr, tok_ptr, vocab, inv_temp, seed, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    base = logit_ptr + row.to(tl.int64) * vocab
    best = tl.full([BLOCK], float("-inf"), tl.float32)
    best_i = tl.zeros([BLOCK], dtype=tl.int32)
    for start in range(0, vocab, BLOCK):
        idx = start + tl.arange(0, BLOCK)
        mask = idx < vocab
        logit = tl.load(base + idx, mask=mask, other=float("-inf")).to(tl.float32)
        h = _lowbias32((row * vocab + idx).to(tl.uint32) ^ seed)
        u = ((h >> 8).to(tl.float32) + 0.5) * (1.0 / 16777216.0)  # uniform in (0, 1)
        score = logit * inv_temp - tl.log(-tl.log(u))  # + Gumbel noise
        take = score > best
        best = tl.where(take, score, best)
        best_i = tl.where(take, idx, best_i)
    top = tl.max(best, axis=0)
    tok = tl.min(tl.where(best == top, best_i, vocab), axis=0)  # first index of the maximum
    tl.store(tok_ptr + row, tok)


def make_inputs():
    g = torch.Generator(device=DEVICE)
    g.manual_seed(0)
    logits = 3.0 * torch.randn(ROWS, VOCAB, device=DEVICE, generator=g)
    logits[:, :1000] += 4.0  # a head of likely tokens
    return (logits.to(torch.bfloat16),)


def run(logits):
    rows, vocab = logits.shape
    tok = torch.empty(rows, device=logits.device, dtype=torch.int32)
    gumbel_max_row_kernel[(rows,)](logits, tok, vocab, 1.0 / TEMPERATURE, SEED, BLOCK=BLOCK, num_warps=4)
    return tok


def reference(logits):
    rows, vocab = logits.shape
    x = (torch.arange(rows, device=logits.device)[:, None] * vocab + torch.arange(vocab, device=logits.device)) ^ SEED
    x = x & MASK
    x ^= x >> 16
    x = (x * 0x7FEB352D) & MASK
    x ^= x >> 15
    x = (x * 0x846CA68B) & MASK
    x ^= x >> 16
    u = ((x >> 8).float() + 0.5) * (1.0 / 16777216.0)
    score = logits.float() * (1.0 / TEMPERATURE) - torch.log(-torch.log(u))
    return score.argmax(dim=1).int()
