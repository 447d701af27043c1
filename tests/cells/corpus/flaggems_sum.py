"""Sum of a whole tensor in two kernels: sqrt(n)-wide blocks into partial sums, then one program (FlagGems).

Source: FlagOpen/FlagGems src/flag_gems/ops/sum.py (as shipped in the PyPI wheel flag-gems 5.0.2),
https://github.com/FlagOpen/FlagGems/blob/master/src/flag_gems/ops/sum.py
Licence: Apache-2.0, Copyright the FlagGems authors (FlagOpen/FlagGems; the LICENSE names no holder)
Stripped: @libentry() (FlagGems' launch cache), logging, torch_device_fn.device; launch as in sum(inp): the block
size is passed to the kernel positionally.
"""

# FlagGems is licensed under the Apache License, Version 2.0 (licenses/Apache-2.0.txt); its LICENSE names no
# copyright holder, and the source files carry no notice of their own. Changed for this corpus: glue stripped as
# the docstring says.

import math
import types

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
DTYPE = torch.bfloat16 if DEVICE == "cuda" else torch.float32
SHAPES = [(1 << 28,), (8192, 12345)] if DEVICE == "cuda" else [(1000,), (37, 29)]


# --- flag_gems/utils/triton_lang_extension.py (imported as tle) ---
@triton.jit
def program_id(
    axis: int,
) -> tl.tensor:
    return tl.program_id(axis).to(tl.int64)


tle = types.ModuleType("flag_gems.utils.triton_lang_extension")
tle.program_id = program_id


# --- flag_gems/ops/sum.py ---
@triton.jit
def sum_kernel_1(
    inp,
    mid,
    M,
    BLOCK_SIZE: tl.constexpr,
):
    if tl.constexpr(inp.dtype.element_ty == tl.float16) or tl.constexpr(
        inp.dtype.element_ty == tl.bfloat16
    ):
        cdtype = tl.float32
    else:
        cdtype = inp.dtype.element_ty

    pid = tle.program_id(0)
    offset = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    inp_ptrs = inp + offset
    mask = offset < M

    inp_val = tl.load(inp_ptrs, mask=mask, other=0).to(cdtype)
    sum_val = tl.sum(inp_val)
    mid_ptr = mid + pid
    tl.store(mid_ptr, sum_val)



@triton.jit
def sum_kernel_2(mid, out, mid_size, BLOCK_MID: tl.constexpr):
    if tl.constexpr(mid.dtype.element_ty == tl.float16) or tl.constexpr(
        mid.dtype.element_ty == tl.bfloat16
    ):
        cdtype = tl.float32
    else:
        cdtype = mid.dtype.element_ty

    offset = tl.arange(0, BLOCK_MID)
    mid_ptrs = mid + offset
    mask = offset < mid_size
    mid_val = tl.load(mid_ptrs, mask=mask, other=0).to(cdtype)
    sum_val = tl.sum(mid_val)
    tl.store(out, sum_val)



def sum(inp, *, dtype=None):
    inp = inp.contiguous()
    M = inp.numel()
    if dtype is None:
        dtype = inp.dtype
        if dtype is torch.bool:
            inp = inp.to(torch.int64)
            dtype = torch.int64
    block_size = triton.next_power_of_2(math.ceil(math.sqrt(M)))
    mid_size = triton.cdiv(M, block_size)
    block_mid = triton.next_power_of_2(mid_size)

    mid = torch.empty((mid_size,), dtype=dtype, device=inp.device)
    out = torch.empty([], dtype=dtype, device=inp.device)

    sum_kernel_1[(mid_size, 1, 1)](inp, mid, M, block_size)
    sum_kernel_2[(1, 1, 1)](mid, out, mid_size, block_mid)
    return out


# --- the cell's convention ---
def make_inputs(*shape):
    if not shape:
        shape = (1 << 28,)
    return (torch.randn(*shape, device=DEVICE, dtype=DTYPE),)


def run(x):
    return sum(x)


def torch_run(x):
    return x.float().sum().to(x.dtype)
