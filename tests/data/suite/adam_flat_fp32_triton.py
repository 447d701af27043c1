"""Already good (near_roof): a fused AdamW step over one flat fp32 parameter buffer.

One AdamW step for 16.8M fp32 parameters kept in flat buffers (params, grads, exp_avg, exp_avg_sq),
as multi-tensor optimizers do: each program updates 1,024 contiguous parameters (8 warps, one
16-byte vector of each buffer per thread, all four loads issued up front; 32 registers, so 2,048
threads per SM and ~128 KB of loads in flight per SM), reading p, g, m, v once and writing p', m',
v' once (into one [3, N] output, so that the inputs stay as they were between calls). 28 bytes per
parameter, 470 MB in all, ~154 us at 3.05 TB/s; ~15 instructions per parameter (a sqrt and a
divide among them) are a small fraction of the SMs' issue slots. The hypothesis: DRAM at its roof
with exactly the bytes the step needs; nothing left to fuse or to coalesce.
"""

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
N = 2**24  # parameters (64 MB per fp32 buffer)
BLOCK = 1024
LR, BETA1, BETA2, EPS, WEIGHT_DECAY, STEP = 1e-3, 0.9, 0.999, 1e-8, 0.01, 10


@triton.jit
def adam_flat_kernel(p_ptr, g_ptr, m_ptr, v_ptr, out_ptr, n, lr, beta1, beta2, eps, wd, bc1, bc2, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    p = tl.load(p_ptr + offs, mask=mask, other=0.0)
    g = tl.load(g_ptr + offs, mask=mask, other=0.0)
    m = tl.load(m_ptr + offs, mask=mask, other=0.0)
    v = tl.load(v_ptr + offs, mask=mask, other=0.0)
    m = beta1 * m + (1.0 - beta1) * g
    v = beta2 * v + (1.0 - beta2) * g * g
    update = (m / bc1) / (tl.sqrt(v / bc2) + eps) + wd * p
    tl.store(out_ptr + offs, p - lr * update, mask=mask)
    tl.store(out_ptr + n + offs, m, mask=mask)
    tl.store(out_ptr + 2 * n + offs, v, mask=mask)


def make_inputs():
    torch.manual_seed(0)
    p = torch.randn(N, device=DEVICE)
    g = torch.randn(N, device=DEVICE) * 0.01
    m = torch.randn(N, device=DEVICE) * 0.001
    v = torch.rand(N, device=DEVICE) * 1e-4
    return p, g, m, v


def run(p, g, m, v):
    n = p.numel()
    out = torch.empty(3, n, device=p.device, dtype=p.dtype)
    bc1, bc2 = 1.0 - BETA1**STEP, 1.0 - BETA2**STEP
    grid = (triton.cdiv(n, BLOCK),)
    adam_flat_kernel[grid](p, g, m, v, out, n, LR, BETA1, BETA2, EPS, WEIGHT_DECAY, bc1, bc2, BLOCK=BLOCK, num_warps=8)
    return out


def reference(p, g, m, v):
    p, g, m, v = p.double(), g.double(), m.double(), v.double()
    m = BETA1 * m + (1 - BETA1) * g
    v = BETA2 * v + (1 - BETA2) * g * g
    bc1, bc2 = 1.0 - BETA1**STEP, 1.0 - BETA2**STEP
    p = p - LR * ((m / bc1) / ((v / bc2).sqrt() + EPS) + WEIGHT_DECAY * p)
    return torch.stack([p, m, v]).float()
