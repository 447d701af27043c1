"""Planted bottleneck: compute bound (dropout drawing a full 10-round Philox block per element and using one word).

Dropout (p = 0.1, kept values scaled by 1/0.9) of 128M bf16 activations with a counter-based RNG:
Philox4x32-10 keyed by the seed, counter = the element's index, as tl.rand does it (written out
here so that the reference can reproduce it bit for bit). Each element runs the 10 rounds for its
own counter (2 wide integer multiplies and 2 three-way XORs per round) and keeps the first of the
four 32-bit words it produces. ~68 instructions per element (triton 3.9, sm_90 SASS: ~30 IMAD /
IMAD.HI and ~19 LOP3 of them, on the half-rate integer paths), ~0.3 ms of issue at best for 512 MB
that DRAM moves in ~0.17 ms: the SMs' issue slots, not memory, set the time. One Philox call per
four elements (all four words: tl.randint4x), or fewer rounds, makes it memory bound.
"""

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
N = 2**27  # 256 MB of bf16 in, 256 MB out
P = 0.1
SEED_LO, SEED_HI = 20231124, 7
BLOCK = 1024
N_ROUNDS = 10
ROUND_A, ROUND_B, KEY_A, KEY_B = 0xD2511F53, 0xCD9E8D57, 0x9E3779B9, 0xBB67AE85
M32 = 0xFFFFFFFF


@triton.jit
def philox_word0(c0, k0, k1, N_ROUNDS: tl.constexpr):
    """Philox4x32 of the counter (c0, 0, 0, 0) under the key (k0, k1): the first output word."""
    c1 = c0 * 0
    c2 = c0 * 0
    c3 = c0 * 0
    for _ in tl.static_range(N_ROUNDS):
        _c0, _c2 = c0, c2
        c0 = tl.umulhi(0xCD9E8D57, _c2) ^ c1 ^ k0
        c2 = tl.umulhi(0xD2511F53, _c0) ^ c3 ^ k1
        c1 = 0xCD9E8D57 * _c2
        c3 = 0xD2511F53 * _c0
        k0 = k0 + 0x9E3779B9
        k1 = k1 + 0xBB67AE85
    return c0


@triton.jit
def dropout_philox_kernel(x_ptr, out_ptr, n, seed_lo, seed_hi, p, scale, N_ROUNDS: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    r = philox_word0(offs.to(tl.uint32), seed_lo.to(tl.uint32), seed_hi.to(tl.uint32), N_ROUNDS)
    ri = r.to(tl.int32, bitcast=True)  # to [0, 1) as tl.rand does
    ri = tl.where(ri < 0, -ri - 1, ri)
    u = ri.to(tl.float32) * 4.6566127342e-10
    y = tl.where(u > p, x.to(tl.float32) * scale, 0.0)
    tl.store(out_ptr + offs, y.to(out_ptr.dtype.element_ty), mask=mask)


def make_inputs():
    torch.manual_seed(0)
    return (torch.randn(N, device=DEVICE, dtype=torch.bfloat16),)


def run(x):
    out = torch.empty_like(x)
    grid = (triton.cdiv(x.numel(), BLOCK),)
    dropout_philox_kernel[grid](
        x, out, x.numel(), SEED_LO, SEED_HI, P, 1.0 / (1.0 - P), N_ROUNDS=N_ROUNDS, BLOCK=BLOCK, num_warps=4
    )
    return out


def _mul_hi_lo(a, x):  # a: int constant < 2^32, x: int64 tensor < 2^32 -> (a * x) >> 32, (a * x) & M32, without overflow
    lo16, hi16 = x & 0xFFFF, x >> 16
    p_lo, p_hi = a * lo16, a * hi16  # < 2^48
    return (p_hi + (p_lo >> 16)) >> 16, (((p_hi & 0xFFFF) << 16) + p_lo) & M32


def _philox_word0(c0):
    c1 = c2 = c3 = torch.zeros_like(c0)
    k0, k1 = SEED_LO, SEED_HI
    for _ in range(N_ROUNDS):
        hi_b, lo_b = _mul_hi_lo(ROUND_B, c2)
        hi_a, lo_a = _mul_hi_lo(ROUND_A, c0)
        c0, c1, c2, c3 = hi_b ^ c1 ^ k0, lo_b, hi_a ^ c3 ^ k1, lo_a
        k0, k1 = (k0 + KEY_A) & M32, (k1 + KEY_B) & M32
    return c0


def reference(x):
    out = torch.empty_like(x)
    step = 2**24
    for s in range(0, x.numel(), step):  # in chunks: int64 temporaries
        c0 = torch.arange(s, min(s + step, x.numel()), device=x.device, dtype=torch.int64)
        r = _philox_word0(c0)
        r = torch.where(r >= 2**31, r - 2**32, r)
        r = torch.where(r < 0, -r - 1, r)
        u = r.float() * 4.6566127342e-10
        out[s : s + step] = torch.where(u > P, x[s : s + step].float() * (1.0 / (1.0 - P)), 0.0).to(x.dtype)
    return out
