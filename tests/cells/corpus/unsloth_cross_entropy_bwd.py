"""Cross-entropy backward, dlogits in 4096-wide blocks, a (rows, blocks) grid, heuristics for the softcap flags (Unsloth).

Source: unslothai/unsloth unsloth/kernels/cross_entropy_loss.py and kernels/utils.py (as shipped in the PyPI wheel
unsloth 2026.10.9), https://github.com/unslothai/unsloth/blob/main/unsloth/kernels/cross_entropy_loss.py
Licence: Apache-2.0, Copyright 2023-present Daniel Han-Chen & the Unsloth team (the file's notice follows)
Stripped: Fast_CrossEntropyLoss (autograd), torch_gpu_device, the MLX / XPU / Triton<3 branches of the helpers (is_hip, triton_tanh); launch
as in Fast_CrossEntropyLoss.backward without softcapping or logit scaling. The forward's saved logsumexp and
losses are made by torch in make_inputs.
"""

# Copyright 2023-present Daniel Han-Chen & the Unsloth team. All rights reserved.
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#     http://www.apache.org/licenses/LICENSE-2.0
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.
#
# Changed for this corpus: glue stripped as the docstring says (licenses/Apache-2.0.txt has the licence).

import functools

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
DTYPE = torch.bfloat16 if DEVICE == "cuda" else torch.float32
SHAPES = [(8192, 32000), (16384, 50304)] if DEVICE == "cuda" else [(4, 100), (3, 5000)]  # (tokens, vocab)

# --- unsloth/kernels/utils.py and unsloth/device_type.py ---
MAX_FUSED_SIZE: int = 65536
next_power_of_2 = triton.next_power_of_2
def calculate_settings(
    n: int,
) -> (
    int,
    int,
):
    BLOCK_SIZE: int = next_power_of_2(n)
    if BLOCK_SIZE > MAX_FUSED_SIZE:
        raise RuntimeError(
            f"Cannot launch Triton kernel since n = {n} exceeds "
            f"the maximum CUDA blocksize = {MAX_FUSED_SIZE}."
        )
    num_warps: int = 4
    if BLOCK_SIZE >= 32768:
        num_warps = 32
    elif BLOCK_SIZE >= 8192:
        num_warps = 16
    elif BLOCK_SIZE >= 2048:
        num_warps = 8
    return BLOCK_SIZE, num_warps

from triton.language.extra import libdevice
triton_tanh = libdevice.tanh
triton_cast = tl.cast


def is_hip():
    return bool(getattr(getattr(torch, "version", None), "hip", None))

@functools.lru_cache(1)
def is_cdna():
    return is_hip() and triton.runtime.driver.active.get_current_target().arch in (
        "gfx940",
        "gfx941",
        "gfx942",
        "gfx950",  # CDNA4 (MI350/MI355X)
    )


# --- unsloth/kernels/cross_entropy_loss.py ---
# log1p / expm1 from tl.log / tl.exp only (Kahan's trick), so no libdevice is needed.
@triton.jit
def _log1p(x):
    # log(1 + x) for x >= 0, keeping x when 1 + x rounds to 1.
    u = 1.0 + x
    return tl.where(u == 1.0, x, tl.log(u) * (x / (u - 1.0)))


@triton.jit
def _softplus(x):
    return tl.maximum(x, 0.0) + _log1p(tl.exp(-tl.abs(x)))


@triton.jit
def _expm1_neg(x):
    # exp(-x) - 1 for x >= 0: Kahan's trick only below 1, where u - 1 cancels; past ~87 u is
    # subnormal and log(u) drifts from -x, so the trick would push the gradient past -1.
    u = tl.exp(-x)
    near_zero = tl.where(u == 1.0, -x, (u - 1.0) * (-x / tl.log(u)))
    return tl.where(x < 1.0, near_zero, u - 1.0)


def _cross_entropy_backward(
    logits_ptr,
    logits_row_stride: tl.constexpr,
    dlogits_ptr,
    dloss_ptr,
    dloss_row_stride: tl.constexpr,
    logsumexp_ptr,
    loss_ptr,
    labels_ptr,
    VOCAB_SIZE: tl.constexpr,
    BLOCK_SIZE: tl.constexpr,
    DO_SOFTCAPPING: tl.constexpr,
    SOFTCAP: tl.constexpr,
    DO_LOGIT_SCALING: tl.constexpr,
    LOGIT_SCALE: tl.constexpr,
):
    """
    CE_i = -y log(P) = y * (log[sum(exp(x))] - x)
    dC/dx = d/dx (y * log[sum(exp(x))] - x * y)

    From https://en.wikipedia.org/wiki/LogSumExp
    d/dx logsumexp = exp(x) / sum(exp(x)) = softmax(x)

    dC/dx = y * exp(x) / sum(exp(x)) - d/dx (x * y)
    dC/dx = y * exp[ log[exp(x) / sum(exp(x))] ] using x = exp(log(x)) trick
    dC/dx = y * exp[x - logsumexp] - d/dx (x * y)

    If y == 0: dC/dx = 0
    If y == 1 and x == label: dC/dlabel = exp[x - logsumexp] - 1
    If y == 1 and x != label: dC/dx     = exp[x - logsumexp]

    exp[x - logsumexp] - 1 rounds to 0 for confident labels, so the label
    uses exp[-loss] - 1 = expm1(-loss) with the accurate forward loss.
    """
    row_idx = tl.program_id(0)
    block_idx = tl.program_id(1)

    logits_ptr += row_idx * triton_cast(logits_row_stride, tl.int64)
    dlogits_ptr += row_idx * triton_cast(logits_row_stride, tl.int64)
    dloss_ptr += row_idx * dloss_row_stride
    col_offsets = block_idx * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = col_offsets < VOCAB_SIZE
    label_idx = tl.load(labels_ptr + row_idx).to(tl.int32)

    if label_idx != -100:
        dloss = tl.load(dloss_ptr)
    else:
        dloss = 0.0

    x = tl.load(logits_ptr + col_offsets, mask = mask, other = -float("inf")).to(tl.float32)

    # d/dx [s * x] = s for Cohere scaling; d/dx [t * tanh(1/t * x)] = 1 - tanh^2(1/t * x) for Gemma 2 softcapping.
    if DO_LOGIT_SCALING:
        # d/dx [s * x] = s
        x = x * LOGIT_SCALE

    # Do logit softcapping for Gemma 2: t * tanh(1/t * x)
    partial = x
    if DO_SOFTCAPPING:
        # d/dx [t * tanh(1/t * x)] = 1 - tanh^2(1/t * x)
        partial = triton_tanh(x / SOFTCAP)
        x = SOFTCAP * partial

    logsumexp = tl.load(logsumexp_ptr + row_idx)
    loss = tl.load(loss_ptr + row_idx)
    y = tl.exp(x - logsumexp)
    y = tl.where(
        col_offsets == label_idx,
        _expm1_neg(loss),  # exp(x - logsumexp) - 1 = exp(-loss) - 1
        y,  # exp(x - logsumexp)
    )

    if DO_LOGIT_SCALING:
        # d/dx [s * x] = s
        y = y * LOGIT_SCALE

    if DO_SOFTCAPPING:
        # d/dx [t * tanh(1/t * x)] = 1 - tanh^2(1/t * x)
        y = y * (1.0 - partial * partial)

    # If y == 0 then dC/dx = 0, and it is already masked to 0, so dloss = 0.
    tl.store(dlogits_ptr + col_offsets, dloss * y, mask = mask)


_cross_entropy_backward = triton.jit(_cross_entropy_backward)
_cross_entropy_backward = triton.heuristics(
    {
        "DO_SOFTCAPPING": lambda args: bool(args["DO_SOFTCAPPING"]),
        "DO_LOGIT_SCALING": lambda args: bool(args["DO_LOGIT_SCALING"]),
    }
)(_cross_entropy_backward)


def cross_entropy_backward(dlosses, logits, logsumexp, losses, labels, DO_SOFTCAPPING = False, logit_softcapping = 0,
                           DO_LOGIT_SCALING = False, logit_scaling = 0):
    n_rows: int
    vocab_size: int
    n_rows, vocab_size = logits.shape
    # Preserve saved logits for other losses and repeated backward calls.
    dlogits = torch.empty_like(logits)

    BLOCK_SIZE: int = 4096
    div: int
    mod: int
    div, mod = divmod(vocab_size, BLOCK_SIZE)
    n_blocks: int = div + (mod != 0)

    _cross_entropy_backward[
        (
            n_rows,
            n_blocks,
        )
    ](
        logits,
        logits.stride(0),
        dlogits,
        dlosses,
        dlosses.stride(0),
        logsumexp,
        losses,
        labels,
        VOCAB_SIZE = vocab_size,
        BLOCK_SIZE = BLOCK_SIZE,
        DO_SOFTCAPPING = DO_SOFTCAPPING,
        SOFTCAP = logit_softcapping,
        DO_LOGIT_SCALING = DO_LOGIT_SCALING,
        LOGIT_SCALE = logit_scaling,
        num_warps = 8,
        enable_fp_fusion = True,
    )
    return dlogits


# --- the cell's convention ---
def make_inputs(tokens=8192, vocab=32000):
    logits = torch.randn(tokens, vocab, device=DEVICE, dtype=DTYPE)
    labels = torch.randint(0, vocab, (tokens,), device=DEVICE)
    labels[torch.rand(tokens, device=DEVICE) < 0.1] = -100  # padding
    logsumexp = torch.logsumexp(logits.float(), dim=-1)  # what the forward saved
    losses = torch.nn.functional.cross_entropy(logits.float(), labels, ignore_index=-100, reduction="none")
    dlosses = torch.rand(tokens, device=DEVICE, dtype=torch.float32)
    return dlosses, logits, logsumexp, losses, labels


def run(dlosses, logits, logsumexp, losses, labels):
    return cross_entropy_backward(dlosses, logits, logsumexp, losses, labels)


def torch_run(dlosses, logits, logsumexp, losses, labels):
    x = logits.float().requires_grad_()
    with torch.enable_grad():
        loss = torch.nn.functional.cross_entropy(x, labels, ignore_index=-100, reduction="none")
        loss.backward(dlosses)
    return x.grad.to(logits.dtype)
