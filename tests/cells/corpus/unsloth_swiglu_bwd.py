"""SwiGLU backward for LoRA MLPs: h, df and de written over DW, e and g in place, 1024 elements per program (Unsloth).

Source: unslothai/unsloth unsloth/kernels/swiglu.py (as shipped in the PyPI wheel unsloth 2026.10.9),
https://github.com/unslothai/unsloth/blob/main/unsloth/kernels/swiglu.py
Licence: Apache-2.0, Copyright 2023-present Daniel Han-Chen & the Unsloth team (the file's notice follows)
Stripped: torch_gpu_device (device context), the torch.compile path (_DWf_DW_dfg_traced); launch as in
swiglu_DWf_DW_dfg_kernel. In place, as in the library: run(DW, e, g) overwrites DW with h = silu(e) * g, e with
df = DW * silu(e) and g with de, and returns them.
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

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
DTYPE = torch.bfloat16 if DEVICE == "cuda" else torch.float32
SHAPES = [(16384, 14336), (3000, 11008)] if DEVICE == "cuda" else [(6, 50), (5, 64)]  # (batch * seq, hd)

# signed int32 max is 2**31-1, so num_elements cannot exceed 2**31.
NUM_INT32_ELEMENTS = 2**31
SAFE_INT32_BUFFER_MULTIPLIER = 4
BLOCK_SIZE = 1024
INT32_SAFETY_BUFFER = NUM_INT32_ELEMENTS - BLOCK_SIZE * SAFE_INT32_BUFFER_MULTIPLIER


@triton.jit
def _DWf_DW_dfg_kernel(DW, e, g, n_elements, BLOCK_SIZE: tl.constexpr, LONG_INDEXING: tl.constexpr):
    """
    e = e.float()
    se = 1.0 / (1.0 + torch.exp(-e))
    f = (se * e).to(dtype)
    h = f * g
    df = DW * f
    dg = DW * g
    de = (dg.float() * se * (1.0 + e * (1.0 - se))).to(dtype)
    """
    block_idx = tl.program_id(0)
    if LONG_INDEXING:
        offsets = block_idx.to(tl.int64) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE).to(tl.int64)
        n_elements = tl.cast(n_elements, tl.int64)
    else:
        offsets = block_idx * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements

    DW_row = tl.load(DW + offsets, mask = mask, other = 0)
    e_row = tl.load(e + offsets, mask = mask, other = 0).to(tl.float32)
    g_row = tl.load(g + offsets, mask = mask, other = 0)

    # se = sigmoid(e), f = se * e, df = DW * f, dg = DW * g, de = dg * se * (1 + e * (1 - se)).
    se_row = tl.sigmoid(e_row)
    # f = (se * e).to(dtype)
    f_row = se_row * e_row
    f_row = f_row.to(DW_row.dtype)
    # h = f * g
    h_row = f_row * g_row
    # df = DW * f
    df_row = DW_row * f_row
    # dg = DW * g
    dg_row = DW_row * g_row
    # de = (dg.float() * se * (1.0 + e * (1.0 - se))).to(dtype)
    de_row = dg_row.to(tl.float32) * se_row * (1.0 + e_row * (1.0 - se_row))
    de_row = de_row.to(DW_row.dtype)

    tl.store(DW + offsets, h_row, mask = mask)
    tl.store(e + offsets, df_row, mask = mask)
    tl.store(g + offsets, de_row, mask = mask)


def swiglu_DWf_DW_dfg_kernel(DW, e, g):
    batch_seq_len, hd = e.shape  # Flattened to 2D, so 1st dim is bsz * seq_len
    n_elements = e.numel()
    grid = lambda meta: (triton.cdiv(n_elements, meta["BLOCK_SIZE"]),)
    _DWf_DW_dfg_kernel[grid](
        DW,
        e,
        g,
        n_elements,
        BLOCK_SIZE = BLOCK_SIZE,
        LONG_INDEXING = 0 if n_elements <= INT32_SAFETY_BUFFER else 1,
        enable_fp_fusion = True,
    )
    return DW, e, g


# --- the cell's convention ---
def make_inputs(rows=16384, hd=14336):
    DW = torch.randn(rows, hd, device=DEVICE, dtype=DTYPE)
    e = torch.randn(rows, hd, device=DEVICE, dtype=DTYPE)
    g = torch.randn(rows, hd, device=DEVICE, dtype=DTYPE)
    return DW, e, g


def run(DW, e, g):
    return swiglu_DWf_DW_dfg_kernel(DW, e, g)


def _DWf_DW_dfg_traced(DW, e, g):
    # Traced: Inductor fuses this in place; the in-place kernel would make it copy e and g first.
    e_float = e.float()
    se = torch.sigmoid(e_float)
    f = (se * e_float).to(DW.dtype)
    h = f * g
    df = DW * f
    dg = DW * g
    de = (dg.float() * se * (1.0 + e_float * (1.0 - se))).to(DW.dtype)
    return h, df, de

def torch_run(DW, e, g):
    return _DWf_DW_dfg_traced(DW, e, g)
