"""Cross-entropy loss per token, one program per row over the whole vocabulary, heuristics for the softcap flags (Unsloth).

Source: unslothai/unsloth unsloth/kernels/cross_entropy_loss.py and kernels/utils.py (as shipped in the PyPI wheel
unsloth 2026.10.9), https://github.com/unslothai/unsloth/blob/main/unsloth/kernels/cross_entropy_loss.py
Licence: Apache-2.0, Copyright 2023-present Daniel Han-Chen & the Unsloth team (the file's notice follows)
Stripped: Fast_CrossEntropyLoss (autograd), torch_gpu_device, the chunked kernel for vocabularies above 65536
(Gemma's), the MLX / XPU / Triton<3 branches of the helpers (is_hip, triton_tanh); launch as in Fast_CrossEntropyLoss.forward(logits,
labels) without softcapping or logit scaling. Returns the per-token losses (0 where the label is -100).
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
SHAPES = [(8192, 32000), (16384, 50304)] if DEVICE == "cuda" else [(4, 100), (3, 33)]  # (tokens, vocab)

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


def _cross_entropy_forward(
    logits_ptr,
    logits_row_stride: tl.constexpr,  # VOCAB_SIZE
    loss_ptr,
    logsumexp_ptr,
    labels_ptr,
    VOCAB_SIZE: tl.constexpr,
    BLOCK_SIZE: tl.constexpr,
    DO_SOFTCAPPING: tl.constexpr,
    SOFTCAP: tl.constexpr,
    DO_LOGIT_SCALING: tl.constexpr,
    LOGIT_SCALE: tl.constexpr,
):
    """
    Cross Entropy Loss = 1/n sum [ -yi log(Pi) ]
    Pi = exp(xi) / sum(exp(xi))
    CE_i = -y log(p) = -y log[ exp(x) / sum(exp(x)) ]
         = -y [ x - log[sum(exp(x))] ]
         = y * (log[sum(exp(x))] - x)
    If y == 0: CE_i = 0
    If y == 1: CE_i = logsumexp - x

    logsumexp is also stable
    Take    y =         log[sum(exp(x))]
       exp(y) =             sum(exp(x))
       exp(y) =             sum(exp(x - c)*exp(c)) Since e^(x-c)*e^c = e^x
       exp(y) =      exp(c)*sum(exp(x - c))
           y  = log(exp(c)*sum(exp(x - c)))
           y  = c + log[sum(exp(x - c))]
    This means we can set c = max(x) to make sure
    exp(x - c) always is exp(x - max(x)).
    This ensures exp(x - max(x))'s maximum is 1 as exp(0) = 1.
    """
    row_idx = tl.program_id(0)
    logits_ptr += row_idx * triton_cast(logits_row_stride, tl.int64)
    loss_ptr += row_idx
    logsumexp_ptr += row_idx
    labels_ptr += row_idx

    col_offsets = tl.arange(0, BLOCK_SIZE)
    mask = col_offsets < VOCAB_SIZE

    label_idx = tl.load(labels_ptr).to(tl.int32)
    logits = tl.load(logits_ptr + col_offsets, mask = mask, other = -float("inf")).to(tl.float32)

    # Cohere logit scaling t * x; Gemma 2 softcapping t * tanh(1/t * x).
    if DO_LOGIT_SCALING:
        logits = LOGIT_SCALE * logits
    # Do logit softcapping for Gemma 2: t * tanh(1/t * x)
    if DO_SOFTCAPPING:
        logits = SOFTCAP * triton_tanh(logits / SOFTCAP)
    if DO_LOGIT_SCALING or DO_SOFTCAPPING:
        # Either transform makes the -inf padding finite: -SOFTCAP via tanh, +inf via a negative scale.
        logits = tl.where(mask, logits, -float("inf"))

    c = tl.max(logits, 0)
    # One reduction that skips the label (col_offsets never equals -100); the label is added back below.
    sum_others = tl.sum(tl.where(col_offsets == label_idx, 0.0, tl.exp(logits - c)), 0)
    logsumexp = c + tl.log(sum_others)

    if label_idx != -100:
        x = tl.load(logits_ptr + label_idx).to(tl.float32)
        # Go logit scaling for Cohere: t * x
        if DO_LOGIT_SCALING:
            x = LOGIT_SCALE * x
        # Do logit softcapping for Gemma 2: t * tanh(1/t * x)
        if DO_SOFTCAPPING:
            x = SOFTCAP * triton_tanh(x / SOFTCAP)
        # lse - x rounds to 0 past a ~16.6 nat margin in fp32 (softmax collapse, arXiv 2610.31642).
        loss = _softplus(logsumexp - x)
        logsumexp = c + tl.log(sum_others + tl.exp(x - c))
    else:
        loss = 0.0
    tl.store(logsumexp_ptr, logsumexp)
    tl.store(loss_ptr, loss)


_cross_entropy_forward = triton.jit(_cross_entropy_forward)
_cross_entropy_forward = triton.heuristics(
    {
        "DO_SOFTCAPPING": lambda args: bool(args["DO_SOFTCAPPING"]),
        "DO_LOGIT_SCALING": lambda args: bool(args["DO_LOGIT_SCALING"]),
    }
)(_cross_entropy_forward)


def cross_entropy_forward(logits, labels, logit_softcapping = 0, logit_scaling = 0):
    n_rows: int
    vocab_size: int
    n_rows, vocab_size = logits.shape
    device = logits.device
    logits = logits.contiguous()
    labels = labels.to(device).contiguous()

    div, mod = divmod(vocab_size, MAX_FUSED_SIZE)
    n_chunks: int = div + (mod != 0)
    losses = torch.empty(n_rows, dtype = torch.float32, device = device)

    DO_SOFTCAPPING: bool = bool(logit_softcapping != 0)
    DO_LOGIT_SCALING: bool = bool(logit_scaling != 0)

    BLOCK_SIZE: int
    num_warps: int
    assert n_chunks == 1, "the chunked kernel for vocabularies above 65536 is not in this cell"
    # Small vocabs <= 65336 (Llama, Mistral) versus large vocabs like Gemma 256K below.
    BLOCK_SIZE, num_warps = calculate_settings(vocab_size)
    if is_cdna():
        num_warps = num_warps // 2
    logsumexp = torch.empty(n_rows, dtype = torch.float32, device = device)

    _cross_entropy_forward[(n_rows,)](
        logits,
        logits.stride(0),
        losses,
        logsumexp,
        labels,
        VOCAB_SIZE = vocab_size,
        BLOCK_SIZE = BLOCK_SIZE,
        DO_SOFTCAPPING = DO_SOFTCAPPING,
        SOFTCAP = logit_softcapping,
        DO_LOGIT_SCALING = DO_LOGIT_SCALING,
        LOGIT_SCALE = logit_scaling,
        num_warps = num_warps,
        enable_fp_fusion = True,
    )
    return losses, logsumexp


# --- the cell's convention ---
def make_inputs(tokens=8192, vocab=32000):
    logits = torch.randn(tokens, vocab, device=DEVICE, dtype=DTYPE)
    labels = torch.randint(0, vocab, (tokens,), device=DEVICE)
    labels[torch.rand(tokens, device=DEVICE) < 0.1] = -100  # padding
    return logits, labels


def run(logits, labels):
    return cross_entropy_forward(logits, labels)[0]


def torch_run(logits, labels):
    return torch.nn.functional.cross_entropy(logits.float(), labels, ignore_index=-100, reduction="none")
