"""minilib: a vendored library module (for the model-step cells). SwiGLU forward, silu(e) * g over the flat tensor, 1024 elements per program (Unsloth).

Source: unslothai/unsloth unsloth/kernels/swiglu.py (as shipped in the PyPI wheel unsloth 2026.10.9),
https://github.com/unslothai/unsloth/blob/main/unsloth/kernels/swiglu.py
Licence: Apache-2.0, Copyright 2023-present Daniel Han-Chen & the Unsloth team (the file's notice follows)
Stripped: torch_gpu_device (device context); launch as in swiglu_fg_kernel (module-level BLOCK_SIZE, a grid
lambda over meta, enable_fp_fusion passed at launch).
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
SHAPES = [(4, 4096, 14336), (3, 1000, 11008)] if DEVICE == "cuda" else [(2, 3, 50), (1, 5, 64)]  # (batch, seq, hd)

# signed int32 max is 2**31-1, so num_elements cannot exceed 2**31.
NUM_INT32_ELEMENTS = 2**31
SAFE_INT32_BUFFER_MULTIPLIER = 4
BLOCK_SIZE = 1024
INT32_SAFETY_BUFFER = NUM_INT32_ELEMENTS - BLOCK_SIZE * SAFE_INT32_BUFFER_MULTIPLIER


@triton.jit
def _fg_kernel(e, g, h, n_elements, BLOCK_SIZE: tl.constexpr, LONG_INDEXING: tl.constexpr):
    block_idx = tl.program_id(0)
    if LONG_INDEXING:
        offsets = block_idx.to(tl.int64) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE).to(tl.int64)
        n_elements = tl.cast(n_elements, tl.int64)
    else:
        offsets = block_idx * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements

    e_row = tl.load(e + offsets, mask = mask, other = 0).to(tl.float32)
    g_row = tl.load(g + offsets, mask = mask, other = 0)

    # f = e * sigmoid(e), h = f * g.
    f_row = e_row * tl.sigmoid(e_row)
    f_row = f_row.to(g_row.dtype)  # Exact copy from HF
    # h = f * g
    h_row = f_row * g_row

    tl.store(h + offsets, h_row, mask = mask)


def swiglu_fg_kernel(e, g):
    batch, seq_len, hd = e.shape
    n_elements = e.numel()
    h = torch.empty((batch, seq_len, hd), dtype = e.dtype, device = e.device)
    grid = lambda meta: (triton.cdiv(n_elements, meta["BLOCK_SIZE"]),)
    _fg_kernel[grid](
        e,
        g,
        h,
        n_elements,
        BLOCK_SIZE = BLOCK_SIZE,
        LONG_INDEXING = 0 if n_elements <= INT32_SAFETY_BUFFER else 1,
        enable_fp_fusion = True,
    )
    return h


# --- the cell's convention ---
def swiglu(e, g):
    """The library's entry point: Unsloth's forward."""
    return swiglu_fg_kernel(e, g)
