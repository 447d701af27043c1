"""The built-in optimizer's source transformations, on the teaching and sample cells."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernel_lab import samples
from kernel_lab.rewrite.base import RewriteContext
from kernel_lab.rewrite.cuda import block_sizes, launch_bounds, pad_shared_tiles, threads
from kernel_lab.rewrite.search import SearchRewriter, apply, launches

TEACHING = Path(__file__).resolve().parent.parent / "benchmarks" / "teaching"


def test_launch_parameters_are_found():
    (launch,) = launches((TEACHING / "matmul_small_tiles.py").read_text())
    assert launch.kernel == "matmul_kernel" and launch.loops
    assert launch.params == {"BLOCK_M": 16, "BLOCK_N": 16, "BLOCK_K": 16, "num_warps": 1, "num_stages": 3}
    assert launch.knobs["num_stages"].added and not launch.knobs["num_warps"].added


def test_grid_follows_the_block_size_only_when_unambiguous():
    source = (TEACHING / "matmul_small_tiles.py").read_text()
    (launch,) = launches(source)
    together = apply(source, launch, {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 64})
    assert "matmul_kernel[(M // 64, N // 64)]" in together and "BLOCK_M=64, BLOCK_N=64, BLOCK_K=64" in together
    alone = apply(source, launch, {"BLOCK_K": 32})
    assert "matmul_kernel[(M // 16, N // 16)]" in alone and "BLOCK_K=32" in alone


def test_missing_num_warps_is_added_to_the_call():
    source = samples.cell("memory_bound").read_text()
    (launch,) = launches(source)
    out = apply(source, launch, {"BLOCK": 4096, "num_warps": 8})
    assert "add_kernel[(triton.cdiv(n, 4096),)](x, y, out, n, BLOCK=4096, num_warps=8)" in out


@pytest.mark.parametrize("kind", ["memory_bound", "latency_bound", "small_grid", "low_occupancy"])
def test_candidates_compile_differ_and_say_what_they_answer(kind):
    source = (TEACHING / "softmax_one_warp.py").read_text()
    rewriter = SearchRewriter()
    first = rewriter.propose(RewriteContext(source, [{"kind": kind}]), n=4)
    assert first and len({c.source for c in first}) == len(first)
    for c in first:
        compile(c.source, "candidate", "exec")
        assert c.answers == kind and c.origin == "search" and "→" in c.explanation
        # the block covers a whole 4096-wide row: it may grow, never shrink
        assert c.meta["config"].get("BLOCK", 4096) >= 4096
    again = rewriter.propose(RewriteContext(source, [{"kind": kind}]), n=4)
    assert not {c.source for c in first} & {c.source for c in again}  # no dead ends revisited


def test_guidance_orders_the_search():
    source = samples.cell("memory_bound").read_text()
    up = SearchRewriter().propose(RewriteContext(source, [{"kind": "memory_bound"}]), n=1)[0]
    down = SearchRewriter().propose(RewriteContext(source, [{"kind": "small_grid"}]), n=1)[0]
    assert "BLOCK 1024 → 2048" in up.explanation and "BLOCK 1024 → 512" in down.explanation


def test_bank_conflicts_get_a_padded_tile():
    source = samples.cell("shared_bank_conflicts").read_text()
    (c, *_) = SearchRewriter().propose(RewriteContext(source, [{"kind": "shared_bank_conflicts"}]))
    assert "__shared__ float tile[TILE][TILE + 1];" in c.source and c.answers == "shared_bank_conflicts"
    assert pad_shared_tiles(c.source) is None  # already padded
    assert pad_shared_tiles(samples.cell("transpose_padded").read_text()) is None


def test_cuda_block_size_follows_its_constant():
    source = samples.cell("shared_bank_conflicts").read_text()
    assert threads("dim3(TILE, TILE)", source) == 1024
    (smaller, why), *_ = block_sizes(source, direction=-1)
    assert "#define TILE 16" in smaller and "1024 → 256 threads" in why
    assert all("#define TILE 64" not in s for s, _ in block_sizes(source))  # 4096 threads: not a block


DIM3_CELL = """
#define N 1024
__global__ void MatAdd(const float* A, const float* B, float* C) { C[0] = A[0] + B[0]; }
void go(const float* A, const float* B, float* C, int b) {
    dim3 threadsPerBlock(8, 8);
    dim3 numBlocks(N / threadsPerBlock.x, N / threadsPerBlock.y);
    MatAdd<<<numBlocks, threadsPerBlock>>>(A, B, C);
    MatAdd<<<numBlocks, b>>>(A, B, C);
}
"""


def test_cuda_dim3_blocks_are_read_and_varied_and_unreadable_launches_are_named():
    # the CUDA programming guide's form, which once got no candidate at all
    assert threads("threadsPerBlock", DIM3_CELL) == 64
    found = {why.split(": ")[1]: s for s, why in block_sizes(DIM3_CELL)}
    assert "dim3 threadsPerBlock(16, 16);" in found["threadsPerBlock (8, 8) → (16, 16) (64 → 256 threads per block)"]
    assert "dim3 threadsPerBlock(32, 8);" in found["threadsPerBlock (8, 8) → (32, 8) (64 → 256 threads per block)"]
    made_of_constants = DIM3_CELL.replace("dim3 threadsPerBlock(8, 8);", "constexpr int T = 16;\n    dim3 threadsPerBlock(T, T);")
    assert any("constexpr int T = 32;" in s for s, _ in block_sizes(made_of_constants))
    (why,) = SearchRewriter().why_nothing(DIM3_CELL).split("; ")
    assert why.startswith("line 8: MatAdd<<<...>>> gives its block as 'b'")


def test_cuda_literal_block_size_moves_grid_and_launch_bounds_together():
    source = samples.cell("low_occupancy_registers").read_text()
    bigger = dict((why, s) for s, why in block_sizes(source, +1))
    s = next(s for why, s in bigger.items() if "128 → 256" in why)
    assert "chase_heavy_regs<<<warps * 32 / 256, 256>>>" in s and "__launch_bounds__(256) chase_heavy_regs" in s
    compile(s, "candidate", "exec")


def test_register_limited_occupancy_gets_launch_bounds():
    source = samples.cell("low_occupancy_registers").read_text()
    (c, *_) = SearchRewriter().propose(
        RewriteContext(
            source, [{"kind": "low_occupancy", "limiter": "registers", "evidence": {"launch__occupancy_limit_registers": 3}}]
        )
    )
    assert "__launch_bounds__(128, 6) chase_heavy_regs" in c.source and c.answers == "low_occupancy"
    added = launch_bounds(samples.cell("latency_bound").read_text(), 4)
    assert [s.count("__launch_bounds__(256, 8) pointer_chase(") for s, _ in added] == [1]


def test_spills_relax_the_launch_bounds():
    source = samples.cell("register_spills").read_text()
    relaxed = [s for s, _ in launch_bounds(source, relax=True)]
    assert ["__launch_bounds__(256, 4) stencil" in relaxed[0], "__launch_bounds__(256) stencil" in relaxed[1]] == [True, True]
