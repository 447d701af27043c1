"""Grouped GEMM (MoE experts): rows of A split by offsets, group g times B[g], a persistent grid of one program per SM (FlagGems).

Source: FlagOpen/FlagGems src/flag_gems/ops/group_gemm.py (as shipped in the PyPI wheel flag-gems 5.0.2),
https://github.com/FlagOpen/FlagGems/blob/master/src/flag_gems/ops/group_gemm.py
Licence: Apache-2.0, Copyright the FlagGems authors (FlagOpen/FlagGems; the LICENSE names no holder)
Stripped: @libentry() (FlagGems' launch cache); @libtuner (FlagGems' subclass of Triton's autotuner) is
triton.autotune with the same configs and key; the pointer-array group_gemm and its kernels (another entry
point). Launch as in group_mm(A, B, offs): on Hopper the tensor-descriptor (TMA) kernel, elsewhere the block-
pointer kernel; both take get_autotune_config()'s list.
"""

# FlagGems is licensed under the Apache License, Version 2.0 (licenses/Apache-2.0.txt); its LICENSE names no
# copyright holder, and the source files carry no notice of their own. Changed for this corpus: glue stripped as
# the docstring says.

import logging

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
DTYPE = torch.bfloat16 if DEVICE == "cuda" else torch.float32
# (experts, tokens routed in all, N, K)
SHAPES = [(8, 16384, 4096, 2048), (64, 8192, 2048, 1408)] if DEVICE == "cuda" else [(3, 40, 32, 32), (2, 20, 16, 48)]

logger = logging.getLogger(__name__)


def supports_tma():
    return torch.cuda.get_device_capability()[0] >= 9


if hasattr(tl, "make_tensor_descriptor"):
    _support_device_tensor_descriptor = True
    make_tensor_descriptor_fn = tl.make_tensor_descriptor
else:
    _support_device_tensor_descriptor = False
    make_tensor_descriptor_fn = None

try:
    from triton.tools.tensor_descriptor import TensorDescriptor

    _support_host_tensor_descriptor = True
except ImportError:
    _support_host_tensor_descriptor = False


@triton.jit
def grouped_launch(
    pid, m, n, block_m: tl.constexpr, block_n: tl.constexpr, group_m: tl.constexpr
):
    grid_m = tl.cdiv(m, block_m)
    grid_n = tl.cdiv(n, block_n)

    width = group_m * grid_n
    group_id = pid // width
    group_size = tl.minimum(grid_m - group_id * group_m, group_m)
    pid_m = group_id * group_m + (pid % group_size)
    pid_n = (pid % width) // group_size

    return pid_m, pid_n


def matmul_tma_set_block_size_hook(nargs):
    BLOCK_M = nargs["BLOCK_M"]
    BLOCK_N = nargs["BLOCK_N"]
    BLOCK_K = nargs["BLOCK_K"]
    nargs["a_desc"].block_shape = [BLOCK_M, BLOCK_K]
    nargs["b_desc"].block_shape = [BLOCK_K, BLOCK_N]
    nargs["c_desc"].block_shape = [BLOCK_M, BLOCK_N]


def get_autotune_config(pre_hook=None):
    return [
        triton.Config(
            {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "GROUP_M": 8},
            num_stages=3,
            num_warps=8,
            pre_hook=pre_hook,
        ),
        triton.Config(
            {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 128, "GROUP_M": 8},
            num_stages=2,
            num_warps=4,
            pre_hook=pre_hook,
        ),
        triton.Config(
            {"BLOCK_M": 256, "BLOCK_N": 128, "BLOCK_K": 128, "GROUP_M": 8},
            num_stages=3,
            num_warps=4,
            pre_hook=pre_hook,
        ),
        triton.Config(
            {"BLOCK_M": 256, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8},
            num_stages=3,
            num_warps=8,
            pre_hook=pre_hook,
        ),
        triton.Config(
            {"BLOCK_M": 64, "BLOCK_N": 256, "BLOCK_K": 32, "GROUP_M": 4},
            num_stages=4,
            num_warps=4,
            pre_hook=pre_hook,
        ),
        triton.Config(
            {"BLOCK_M": 128, "BLOCK_N": 64, "BLOCK_K": 32, "GROUP_M": 4},
            num_stages=4,
            num_warps=4,
            pre_hook=pre_hook,
        ),
        triton.Config(
            {"BLOCK_M": 256, "BLOCK_N": 256, "BLOCK_K": 64, "GROUP_M": 8},
            num_stages=3,
            num_warps=8,
            pre_hook=pre_hook,
        ),
    ]



@triton.autotune(
    configs=get_autotune_config(matmul_tma_set_block_size_hook), key=["M", "N", "K"]
)
@triton.jit
def grouped_mm_tma_kernel(
    a_desc,
    b_desc,
    c_desc,
    C,
    offs,
    num_groups: tl.constexpr,
    M,
    N: tl.constexpr,
    K: tl.constexpr,
    stride_cm: tl.constexpr,
    stride_cn: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr,
):
    total_grid = tl.num_programs(axis=0)
    tile_idx = tl.program_id(axis=0)
    num_n_tiles = tl.cdiv(N, BLOCK_N)
    last_problem_end = 0
    group_start = 0
    group_end = 0

    for group_idx in tl.range(num_groups):
        group_end = tl.load(offs + group_idx).to(tl.int32)
        m = group_end - group_start
        num_m_tiles = tl.cdiv(m, BLOCK_M)
        num_tiles = num_m_tiles * num_n_tiles

        current_problem_end = last_problem_end + num_tiles
        if tile_idx >= last_problem_end and tile_idx < current_problem_end:
            loop_count = (current_problem_end - tile_idx + total_grid - 1) // total_grid
            for _ in tl.range(loop_count):
                tile_idx_in_gemm = tile_idx - last_problem_end
                tile_m_idx, tile_n_idx = grouped_launch(
                    tile_idx_in_gemm, m, N, BLOCK_M, BLOCK_N, GROUP_M
                )

                offs_am = group_start + tile_m_idx * BLOCK_M
                offs_bn = tile_n_idx * BLOCK_N
                offs_bk = group_idx * K

                accumulator = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)

                for k in tl.range(0, tl.cdiv(K, BLOCK_K)):
                    a = a_desc.load([offs_am, k * BLOCK_K])
                    b = b_desc.load([offs_bk + k * BLOCK_K, offs_bn])
                    accumulator = tl.dot(a, b, acc=accumulator, allow_tf32=False)

                c = accumulator.to(c_desc.dtype)

                if offs_am + BLOCK_M <= group_end:
                    c_desc.store([offs_am, offs_bn], c)
                else:
                    offs_cm = offs_am + tl.arange(0, BLOCK_M)
                    offs_cn = offs_bn + tl.arange(0, BLOCK_N)
                    c_ptrs = (
                        C + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
                    )
                    c_mask = (offs_cm[:, None] < group_end) & (offs_cn[None, :] < N)
                    tl.store(c_ptrs, c, mask=c_mask)

                tile_idx += total_grid

        last_problem_end = current_problem_end
        group_start = group_end


@triton.autotune(configs=get_autotune_config(), key=["M", "N", "K"])
@triton.jit
def grouped_mm_kernel(
    A,
    B,
    C,
    offs,
    num_groups: tl.constexpr,
    M,
    N: tl.constexpr,
    K: tl.constexpr,
    stride_am: tl.constexpr,
    stride_ak: tl.constexpr,
    stride_bk: tl.constexpr,
    stride_bn: tl.constexpr,
    stride_cm: tl.constexpr,
    stride_cn: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr,
):
    total_grid = tl.num_programs(axis=0)
    tile_idx = tl.program_id(axis=0)
    num_n_tiles = tl.cdiv(N, BLOCK_N)
    last_problem_end = 0
    group_start = 0
    group_end = 0

    for group_idx in tl.range(num_groups):
        group_end = tl.load(offs + group_idx).to(tl.int32)
        m = group_end - group_start
        num_m_tiles = tl.cdiv(m, BLOCK_M)
        num_tiles = num_m_tiles * num_n_tiles

        current_problem_end = last_problem_end + num_tiles
        if tile_idx >= last_problem_end and tile_idx < current_problem_end:
            loop_count = (current_problem_end - tile_idx + total_grid - 1) // total_grid
            for _ in tl.range(loop_count):
                tile_idx_in_gemm = tile_idx - last_problem_end
                tile_m_idx, tile_n_idx = grouped_launch(
                    tile_idx_in_gemm, m, N, BLOCK_M, BLOCK_N, GROUP_M
                )

                offs_am = group_start + tile_m_idx * BLOCK_M
                offs_bn = tile_n_idx * BLOCK_N
                offs_bk = group_idx * K

                a_block_ptr = tl.make_block_ptr(
                    base=A,
                    shape=(M, K),
                    strides=(stride_am, stride_ak),
                    offsets=(offs_am, 0),
                    block_shape=(BLOCK_M, BLOCK_K),
                    order=(1, 0),
                )

                b_block_ptr = tl.make_block_ptr(
                    base=B,
                    shape=(num_groups * K, N),
                    strides=(stride_bk, stride_bn),
                    offsets=(offs_bk, offs_bn),
                    block_shape=(BLOCK_K, BLOCK_N),
                    order=(1, 0),
                )

                accumulator = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)

                for k in tl.range(0, tl.cdiv(K, BLOCK_K)):
                    a = tl.load(a_block_ptr, boundary_check=(0, 1))
                    b = tl.load(b_block_ptr, boundary_check=(0, 1))
                    accumulator = tl.dot(a, b, acc=accumulator, allow_tf32=False)

                    a_block_ptr = tl.advance(a_block_ptr, (0, BLOCK_K))
                    b_block_ptr = tl.advance(b_block_ptr, (BLOCK_K, 0))

                c = accumulator.to(C.dtype.element_ty)

                c_block_ptr = tl.make_block_ptr(
                    base=C,
                    shape=(M, N),
                    strides=(stride_cm, stride_cn),
                    offsets=(offs_am, offs_bn),
                    block_shape=(BLOCK_M, BLOCK_N),
                    order=(1, 0),
                )

                if offs_am + BLOCK_M <= group_end:
                    tl.store(c_block_ptr, c, boundary_check=(0, 1))
                else:
                    offs_cm = offs_am + tl.arange(0, BLOCK_M)
                    offs_cn = offs_bn + tl.arange(0, BLOCK_N)
                    c_ptrs = (
                        C + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
                    )
                    c_mask = (offs_cm[:, None] < group_end) & (offs_cn[None, :] < N)
                    tl.store(c_ptrs, c, mask=c_mask)

                tile_idx += total_grid

        last_problem_end = current_problem_end
        group_start = group_end

def group_mm(A: torch.Tensor, B: torch.Tensor, offs: torch.Tensor) -> torch.Tensor:
    assert A.dim() == 2
    assert B.dim() == 3
    M, K = A.shape

    num_groups, BK, N = B.shape
    strideBK, strideBN = B.stride(1), B.stride(2)

    assert num_groups == offs.numel()
    NUM_SMS = torch.cuda.get_device_properties("cuda").multi_processor_count
    C = A.new_empty(M, N)
    if _support_host_tensor_descriptor and supports_tma():
        dummy_block = [1, 1]

        a_desc = TensorDescriptor(A, A.shape, A.stride(), dummy_block)
        b_desc = TensorDescriptor(
            B, [num_groups * K, N], [strideBK, strideBN], dummy_block
        )
        c_desc = TensorDescriptor(C, C.shape, C.stride(), dummy_block)

        grouped_mm_tma_kernel[(NUM_SMS,)](
            a_desc,
            b_desc,
            c_desc,
            C,
            offs,
            num_groups,
            M,
            N,
            K,
            C.stride(0),
            C.stride(1),
        )
    else:
        grouped_mm_kernel[(NUM_SMS,)](
            A,
            B,
            C,
            offs,
            num_groups,
            M,
            N,
            K,
            A.stride(0),
            A.stride(1),
            strideBK,
            strideBN,
            C.stride(0),
            C.stride(1),
        )

    return C


# --- the cell's convention ---
def make_inputs(experts=8, tokens=16384, n=4096, k=2048):
    A = torch.randn(tokens, k, device=DEVICE, dtype=DTYPE)
    B = torch.randn(experts, k, n, device=DEVICE, dtype=DTYPE) / k**0.5
    # uneven, sorted group ends, as a router's counts give them (the last one is the number of rows)
    counts = torch.distributions.Dirichlet(torch.ones(experts)).sample() * tokens
    offs = torch.cumsum(counts.round().to(torch.int32), 0).clamp(max=tokens).to(torch.int32)
    offs[-1] = tokens
    return A, B, offs.to(DEVICE)


def run(A, B, offs):
    return group_mm(A, B, offs)


def torch_run(A, B, offs):
    out, start = torch.empty(A.shape[0], B.shape[2], device=A.device, dtype=A.dtype), 0
    for g, end in enumerate(offs.tolist()):
        out[start:end] = (A[start:end].float() @ B[g].float()).to(A.dtype)
        start = end
    return out
