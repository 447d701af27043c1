"""Per-token-group 8-bit quantization (FP8 on the GPU, int8 on the CPU), one program per group of 128 (SGLang).

Source: sgl-project/sglang python/sglang/kernels/ops/quantization/fp8_kernel.py (as shipped in the PyPI wheel
sglang 0.5.23), https://github.com/sgl-project/sglang/tree/main/python/sglang
Licence: Apache-2.0, Copyright 2024 SGLang Team (the file's notice follows)
Stripped: the ROCm ranges, the column-major / TMA-aligned / UE8M0 scale layouts and their kernel, output_q and
output_s; launch as in _per_token_group_quant_8bit_raw(x, 128, dtype=...), SGLang's Triton path. The library
quantizes to int8 through the same function; the CPU uses that dtype because the interpreter has no FP8.
"""

# Copyright 2024 SGLang Team
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
#
# Changed for this corpus: glue stripped as the docstring says (licenses/Apache-2.0.txt has the licence).

from typing import Tuple

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
DTYPE = torch.bfloat16 if DEVICE == "cuda" else torch.float32
QUANT_DTYPE = torch.float8_e4m3fn if DEVICE == "cuda" else torch.int8
SHAPES = [(16384, 7168), (4096, 18432)] if DEVICE == "cuda" else [(4, 256), (3, 384)]  # (tokens, hidden)
GROUP_SIZE = 128


@triton.jit
def _per_token_group_quant_8bit(
    # Pointers to inputs and output
    y_ptr,
    y_q_ptr,
    y_s_ptr,
    # Stride of input
    y_stride,
    # Columns of input
    N,
    # Avoid to divide zero
    eps,
    # Information for float8
    bit8_min,
    bit8_max,
    # Meta-parameters
    BLOCK: tl.constexpr,
):
    """A Triton-accelerated function to perform per-token-group quantization on a
    tensor.

    This function converts the tensor values into float8 values.
    """
    # Map the program id to the row of X and Y it should compute.
    g_id = tl.program_id(0)
    y_ptr += g_id * y_stride
    y_q_ptr += g_id * y_stride
    y_s_ptr += g_id

    cols = tl.arange(0, BLOCK)  # N <= BLOCK
    mask = cols < N

    y = tl.load(y_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    # Quant
    _absmax = tl.maximum(tl.max(tl.abs(y)), eps)
    y_s = _absmax / bit8_max
    y_s_inv = 1.0 / y_s
    y_q = tl.clamp(y * y_s_inv, bit8_min, bit8_max).to(y_q_ptr.dtype.element_ty)

    tl.store(y_q_ptr + cols, y_q, mask=mask)
    tl.store(y_s_ptr, y_s)


def _per_token_group_quant_8bit_raw(
    x: torch.Tensor,
    group_size: int,
    eps: float = 1e-10,
    dtype: torch.dtype = QUANT_DTYPE,
) -> Tuple[torch.Tensor, torch.Tensor]:
    assert x.shape[-1] % group_size == 0, (
        "the last dimension of `x` cannot be divisible by `group_size`"
    )
    assert x.is_contiguous(), "`x` is not contiguous"

    if dtype == torch.int8:
        info = torch.iinfo(dtype)
    else:
        info = torch.finfo(dtype)
    bit8_max = info.max
    bit8_min = info.min

    x_q = torch.empty_like(x, device=x.device, dtype=dtype)
    x_s = torch.empty(
        x.shape[:-1] + (x.shape[-1] // group_size,),
        device=x.device,
        dtype=torch.float32,
    )

    M = x.numel() // group_size
    N = group_size

    BLOCK = triton.next_power_of_2(N)
    # heuristics for number of warps
    num_warps = min(max(BLOCK // 256, 1), 8)
    num_stages = 1
    _per_token_group_quant_8bit[(M,)](
        x,
        x_q,
        x_s,
        group_size,
        N,
        eps,
        bit8_min=bit8_min,
        bit8_max=bit8_max,
        BLOCK=BLOCK,
        num_warps=num_warps,
        num_stages=num_stages,
    )

    return x_q, x_s


# --- the cell's convention ---
def make_inputs(tokens=16384, hidden=7168):
    return (torch.randn(tokens, hidden, device=DEVICE, dtype=DTYPE),)


def run(x):
    return _per_token_group_quant_8bit_raw(x, GROUP_SIZE)


def torch_run(x):
    info = torch.iinfo(QUANT_DTYPE) if QUANT_DTYPE == torch.int8 else torch.finfo(QUANT_DTYPE)
    groups = x.float().view(x.shape[0], -1, GROUP_SIZE)
    scale = groups.abs().amax(-1).clamp(min=1e-10) / info.max
    q = (groups * (1.0 / scale[..., None])).clamp(info.min, info.max).to(QUANT_DTYPE)
    return q.view(x.shape), scale
