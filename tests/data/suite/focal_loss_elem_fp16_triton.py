"""Already good (near_roof), a near miss for compute bound: per-element sigmoid focal loss (reduction='none').

Dense-detection style focal loss (gamma = 2, alpha = 0.25) over 134,217,728 fp16 logits with uint8 0/1
targets, written back per element in fp16: 2 + 1 + 2 = 5 bytes per element, 671 MB, ~220 us at
3.05 TB/s. The arithmetic looks heavy (a stable softplus with one exp and one log, the (1 - p_t)^2
modulating factor, alpha weighting: ~25 instructions per element in fp32, ~3.4G in all, ~110 us of
issue at full rate), which reads like a compute-bound loss; but the loads and stores are contiguous and
vectorised (BLOCK = 4096, 8 warps: 16 elements per thread, 16-byte fp16 loads) and every byte is moved
once, so DRAM should set the time. The hypothesis: DRAM >= 80% of peak moving ~1.0x the needed bytes,
SM% ~40-55%; nothing to fix but the data type.
"""

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
N = 1 << 27
BLOCK = 4096
ALPHA = 0.25


@triton.jit
def focal_loss_kernel(x_ptr, t_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    t = tl.load(t_ptr + offs, mask=mask, other=0)
    z = tl.where(t != 0, x, -x)  # logit of the true class: p_t = sigmoid(z)
    e = tl.exp(-tl.abs(z))
    nll = tl.maximum(-z, 0.0) + tl.log(1.0 + e)  # -log(p_t), stable softplus(-z)
    pt = tl.where(z >= 0, 1.0 / (1.0 + e), e / (1.0 + e))
    w = tl.where(t != 0, alpha, 1.0 - alpha)
    loss = w * (1.0 - pt) * (1.0 - pt) * nll
    tl.store(out_ptr + offs, loss.to(tl.float16), mask=mask)


def make_inputs():
    g = torch.Generator(device=DEVICE)
    g.manual_seed(0)
    x = (torch.randn(N, device=DEVICE, generator=g) * 3.0).half()
    t = (torch.rand(N, device=DEVICE, generator=g) < 0.1).to(torch.uint8)
    return x, t


def run(x, t):
    out = torch.empty_like(x)
    focal_loss_kernel[(triton.cdiv(x.numel(), BLOCK),)](x, t, out, x.numel(), ALPHA, BLOCK=BLOCK, num_warps=8)
    return out


def reference(x, t):
    xf = x.float()
    tf = t.float()
    p = torch.sigmoid(xf)
    nll = torch.nn.functional.binary_cross_entropy_with_logits(xf, tf, reduction="none")
    pt = p * tf + (1 - p) * (1 - tf)
    w = ALPHA * tf + (1 - ALPHA) * (1 - tf)
    return (w * (1 - pt) ** 2 * nll).half()
