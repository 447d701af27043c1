"""Mean over several dimensions: the reduced dims moved last, then BLOCK_M rows per program, @triton.autotune (FlagGems).

Source: FlagOpen/FlagGems src/flag_gems/ops/mean.py, utils/shape_utils.py and the "naive_reduction" entry of
runtime/backend/_nvidia/tune_configs.yaml (as shipped in the PyPI wheel flag-gems 5.0.2),
https://github.com/FlagOpen/FlagGems/blob/master/src/flag_gems/ops/mean.py
Licence: Apache-2.0, Copyright the FlagGems authors (FlagOpen/FlagGems; the LICENSE names no holder)
Stripped: @libentry() (FlagGems' launch cache); @libtuner (FlagGems' subclass of Triton's autotuner) is
triton.autotune with the same configs and key; runtime.get_tuned_config("naive_reduction") is the list its
config loader builds from the YAML (a generated entry: block_m x block_n, num_warps 4, the loader's default
num_stages 2); flag_gems.runtime.torch_device_fn is torch.cuda (a null context on the CPU); the single-dim
branches of mean_dim_comm and their kernels (this call reduces two dims). Launch as in mean_dim(x, dim=[0, 1]).
"""

# FlagGems is licensed under the Apache License, Version 2.0 (licenses/Apache-2.0.txt); its LICENSE names no
# copyright holder, and the source files carry no notice of their own. Changed for this corpus: glue stripped as
# the docstring says.

import contextlib
import logging
import math
import types
from functools import reduce

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
DTYPE = torch.bfloat16 if DEVICE == "cuda" else torch.float32
logger = logging.getLogger(__name__)
torch_device_fn = torch.cuda if DEVICE == "cuda" else types.SimpleNamespace(device=lambda device: contextlib.nullcontext())
SHAPES = [(16, 4096, 4096), (8, 1000, 5120)] if DEVICE == "cuda" else [(2, 3, 64), (3, 5, 33)]  # (batch, seq, hidden)


# --- flag_gems/utils/triton_lang_extension.py (imported as tle) ---
@triton.jit
def program_id(
    axis: int,
) -> tl.tensor:
    return tl.program_id(axis).to(tl.int64)


tle = types.ModuleType("flag_gems.utils.triton_lang_extension")
tle.program_id = program_id


# --- flag_gems/utils/shape_utils.py ---
def dim_compress(inp, dims):
    if isinstance(dims, int):
        dims = [dims]
    dim = inp.ndim
    stride = inp.stride()
    batch_dim = [i for i in range(dim) if i not in dims]
    sorted_reduction_dim = sorted(dims, key=lambda x: stride[x], reverse=True)
    order = batch_dim + sorted_reduction_dim
    return inp.permute(order).contiguous()


# --- flag_gems/runtime: get_tuned_config("naive_reduction") ---
def get_tuned_config_naive_reduction():
    # naive_reduction: [{gen: true, param_map: {META: {BLOCK_M: block_m, BLOCK_N: block_n}, num_warps: 4},
    #                    block_m: [1, 2, 4, 8], block_n: [1024]}]
    return [
        triton.Config({"BLOCK_M": block_m, "BLOCK_N": block_n}, num_warps=4, num_stages=2, num_ctas=1)
        for block_m in [1, 2, 4, 8]
        for block_n in [1024]
    ]


# --- flag_gems/ops/mean.py ---
@triton.autotune(
    configs=get_tuned_config_naive_reduction(),
    key=["M", "N"],
)
@triton.jit
def mean_dim_kernel(
    inp,
    out,
    M,
    N,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
):
    if tl.constexpr(inp.dtype.element_ty == tl.float16) or tl.constexpr(
        inp.dtype.element_ty == tl.bfloat16
    ):
        cdtype = tl.float32
    else:
        cdtype = inp.dtype.element_ty

    # Map the program id to the row of inp it should compute.
    pid = tle.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)[:, None]
    inp = inp + pid * N
    out = out + pid
    row_mask = pid < M

    _sum = tl.zeros([BLOCK_M, BLOCK_N], dtype=cdtype)
    for off in range(0, N, BLOCK_N):
        cols = off + tl.arange(0, BLOCK_N)[None, :]
        col_mask = cols < N
        mask = row_mask and col_mask

        a = tl.load(inp + cols, mask, other=0).to(cdtype)
        _sum += a
    summed = tl.sum(_sum, axis=1)[:, None]
    mean = summed / N
    tl.store(out, mean, row_mask)

def mean_dim_comm(inp, dim=None, keepdim=False, *, dtype=None, out=None):
    logger.debug("GEMS MEAN_DIM")
    if dtype is None:
        dtype = inp.dtype
        if dtype is torch.bool:
            inp = inp.to(torch.int64)
            dtype = torch.int64

    shape = list(inp.shape)

    # -------- normalize dim to a list of ints --------
    if isinstance(dim, int):
        dim = [dim]
    else:
        try:
            dim = list(dim)
        except TypeError:
            raise TypeError(
                f"dim must be an int, iterable of ints, or [], got {type(dim)}"
            )

    dim = [d % inp.ndim for d in dim]
    # -------------------------------------------------

    assert len(dim) > 1, "the single-dim branches are not in this cell"
    inp = dim_compress(inp, dim)
    N = 1
    for i in dim:
        N *= shape[i]
        shape[i] = 1
    M = inp.numel() // N
    if out is None:
        out = torch.empty(shape, dtype=dtype, device=inp.device)

    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]),)
    with torch_device_fn.device(inp.device):
        mean_dim_kernel[grid](inp, out, M, N)
    if not keepdim:
        out = out.squeeze(dim=dim)
    return out


# --- the cell's convention ---
def make_inputs(batch=16, seq=4096, hidden=4096):
    return (torch.randn(batch, seq, hidden, device=DEVICE, dtype=DTYPE),)


def run(x):
    return mean_dim_comm(x, [0, 1])


def torch_run(x):
    return x.float().mean(dim=(0, 1)).to(x.dtype)
