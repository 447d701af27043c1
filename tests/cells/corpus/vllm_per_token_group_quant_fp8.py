"""Per-token-group FP8 quantization (groups of 128 along the row), one program per group (vLLM, its Triton path).

Source: vllm-project/vllm vllm/model_executor/layers/quantization/utils/fp8_utils.py and quant_utils.py (as shipped
in the PyPI wheel vllm 0.33.0),
https://github.com/vllm-project/vllm/blob/main/vllm/model_executor/layers/quantization/utils/fp8_utils.py
Licence: Apache-2.0, Copyright contributors to the vLLM project (the file's SPDX notice follows)
Stripped: current_platform (float8_e4m3fn, not the ROCm fnuz type), the column-major / TMA-aligned scale layouts
and their kernel, out_q, and the CUDA-op fast path that vLLM takes first for contiguous CUDA inputs
(torch.ops._C.per_token_group_fp8_quant): this cell runs vLLM's Triton fallback, as on platforms without the op.
Launch as in per_token_group_quant_fp8(x, 128, use_ue8m0=False). Outputs float8_e4m3fn values and float32 scales.
"""

# SPDX-License-Identifier: Apache-2.0
# SPDX-FileCopyrightText: Copyright contributors to the vLLM project
#
# Changed for this corpus: glue stripped as the docstring says (licenses/Apache-2.0.txt has the licence).

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
DTYPE = torch.bfloat16 if DEVICE == "cuda" else torch.float32
SHAPES = [(16384, 7168), (4096, 18432)] if DEVICE == "cuda" else [(4, 256), (3, 384)]  # (tokens, hidden)
GROUP_SIZE = 128
FP8_DTYPE = torch.float8_e4m3fn


# --- vllm/model_executor/layers/quantization/utils/quant_utils.py ---
def get_fp8_min_max() -> tuple[float, float]:
    """Get the min and max values for FP8 quantization."""
    finfo = torch.finfo(FP8_DTYPE)
    return finfo.min, finfo.max


# --- vllm/model_executor/layers/quantization/utils/fp8_utils.py ---
@triton.jit
def _per_token_group_quant_fp8(
    # Pointers to inputs and output
    y_ptr,
    y_q_ptr,
    y_s_ptr,
    group_size,
    # Num columns of y
    y_num_columns,
    y_row_stride,
    # Avoid to divide zero
    eps,
    # Information for float8
    fp8_min: tl.constexpr,
    fp8_max: tl.constexpr,
    use_ue8m0: tl.constexpr,
    # Meta-parameters
    BLOCK: tl.constexpr,
):
    """A Triton-accelerated function to perform per-token-group
    quantization on a tensor.
    This function converts the tensor values into float8 values.
    """
    groups_per_row = y_num_columns // group_size

    # Map the program id to the row of X and Y it should compute.
    g_id = tl.program_id(0)
    row = g_id // groups_per_row
    row_g_id = g_id % groups_per_row

    # Ensure offset calculations use int64 to prevent overflow
    y_ptr_offset = (row.to(tl.int64) * y_row_stride) + (
        row_g_id.to(tl.int64) * group_size
    )
    y_ptr += y_ptr_offset

    y_q_ptr_offset = g_id.to(tl.int64) * group_size
    y_q_ptr += y_q_ptr_offset
    y_s_ptr += g_id

    cols = tl.arange(0, BLOCK)  # N <= BLOCK
    mask = cols < group_size

    y = tl.load(y_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    # Quant
    # Use multiply-by-reciprocal instead of division to match PyTorch's
    # tensor/scalar division precision (GPU fast-division for constexpr
    # divisors can introduce 1-ULP error that flips FP8 quantization at
    # representable-value boundaries).
    _absmax = tl.maximum(tl.max(tl.abs(y)), eps)
    scale_raw = _absmax * (1.0 / fp8_max)
    y_s = tl.math.exp2(tl.ceil(tl.log2(scale_raw))) if use_ue8m0 else scale_raw
    y_q = tl.clamp(y / y_s, fp8_min, fp8_max).to(y_q_ptr.dtype.element_ty)

    tl.store(y_q_ptr + cols, y_q, mask=mask)
    tl.store(y_s_ptr, y_s)


def per_token_group_quant_fp8(
    x: torch.Tensor,
    group_size: int,
    eps: float = 1e-10,
    dtype: torch.dtype | None = None,
    use_ue8m0: bool | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    dtype = FP8_DTYPE if dtype is None else dtype
    assert x.shape[-1] % group_size == 0, (
        f"the last dimension of `x` {x.shape[-1]} must be divisible "
        f"by `group_size` {group_size}"
    )
    assert x.stride(-1) == 1, "`x` groups must be contiguous"

    fp8_min, fp8_max = get_fp8_min_max()

    x_q = torch.empty(x.shape, device=x.device, dtype=dtype)
    shape = x.shape[:-1] + (x.shape[-1] // group_size,)
    x_s = torch.empty(shape, device=x.device, dtype=torch.float32)

    # TRITON FALLBACK
    M = x.numel() // group_size
    N = group_size
    BLOCK = triton.next_power_of_2(N)
    # heuristics for number of warps
    num_warps = min(max(BLOCK // 256, 1), 8)
    num_stages = 1
    _per_token_group_quant_fp8[(M,)](
        x,
        x_q,
        x_s,
        group_size,
        x.shape[1],
        x.stride(0),
        eps,
        fp8_min=fp8_min,
        fp8_max=fp8_max,
        use_ue8m0=use_ue8m0,
        BLOCK=BLOCK,
        num_warps=num_warps,
        num_stages=num_stages,
    )

    return x_q, x_s


# --- the cell's convention ---
def make_inputs(tokens=16384, hidden=7168):
    return (torch.randn(tokens, hidden, device=DEVICE, dtype=DTYPE),)


def run(x):
    return per_token_group_quant_fp8(x, GROUP_SIZE, use_ue8m0=False)


def torch_run(x):
    fp8_min, fp8_max = get_fp8_min_max()
    groups = x.float().view(x.shape[0], -1, GROUP_SIZE)
    scale = groups.abs().amax(-1).clamp(min=1e-10) * (1.0 / fp8_max)
    q = (groups / scale[..., None]).clamp(fp8_min, fp8_max).to(FP8_DTYPE)
    return q.view(x.shape), scale
