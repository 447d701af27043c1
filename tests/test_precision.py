"""Every recorded report of the package and the course on the roofline: the precision each kernel is placed under and
the roof it is measured against, against a table written down from each kernel's source; the SASS behind the rule
that sets half-precision moves and conversions aside; and the arrows from a lesson's naive version to its fix."""

from __future__ import annotations

import importlib.util
import math
import re
from dataclasses import replace
from pathlib import Path

import ncu_report
import pytest

from kernel_lab import course
from kernel_lab.analysis.roofline import _flop_rates, idioms, roofline
from kernel_lab.profiling import report

ROOT = Path(__file__).resolve().parent.parent
LESSONS = "kernel_lab/course/lessons"
FP32, TF32, BF16 = "FP32", "Tensor TF32", "Tensor BF16/FP16"

#: report -> (kernel, precision, roof) per launch, from the kernel's source (None: no floating-point arithmetic)
EXPECTED: dict[str, list[tuple[str, str | None, str]]] = {
    # lesson 1: fp32 adds and an axpy stream 12 bytes per FLOP (the naive add too: 64 elements per program); the GEMM
    # is fp16 tl.dot on the tensor cores
    f"{LESSONS}/01_roofline/example_axpy.ncu-rep": [("axpy_kernel", FP32, "DRAM")],
    f"{LESSONS}/01_roofline/example_block256.ncu-rep": [("add_kernel", FP32, "DRAM")],
    f"{LESSONS}/01_roofline/example_gemm.ncu-rep": [("matmul_kernel", BF16, BF16)],
    f"{LESSONS}/01_roofline/naive.ncu-rep": [("add_kernel", FP32, "DRAM")],
    f"{LESSONS}/01_roofline/reference.ncu-rep": [("add_kernel", FP32, "DRAM")],
    # lesson 2: an AoS-to-SoA copy, lesson 3: a transpose: data movement only
    f"{LESSONS}/02_coalescing/attempt_field_loads.ncu-rep": [("aos_to_soa_kernel", None, "DRAM")],
    f"{LESSONS}/02_coalescing/naive.ncu-rep": [("aos_to_soa_kernel", None, "DRAM")],
    f"{LESSONS}/02_coalescing/reference.ncu-rep": [("aos_to_soa_kernel", None, "DRAM")],
    f"{LESSONS}/03_bank_conflicts/attempt_pad2.ncu-rep": [("transpose_kernel", None, "DRAM")],
    f"{LESSONS}/03_bank_conflicts/example_swizzle.ncu-rep": [("transpose_kernel", None, "DRAM")],
    f"{LESSONS}/03_bank_conflicts/naive.ncu-rep": [("transpose_kernel", None, "DRAM")],
    f"{LESSONS}/03_bank_conflicts/reference.ncu-rep": [("transpose_kernel", None, "DRAM")],
    # lesson 4: linked-list walks adding a float per node
    f"{LESSONS}/04_occupancy/attempt_block256.ncu-rep": [("walk_kernel", FP32, "DRAM")],
    f"{LESSONS}/04_occupancy/attempt_launch_bounds.ncu-rep": [("walk_kernel", FP32, "DRAM")],
    f"{LESSONS}/04_occupancy/naive.ncu-rep": [("walk_kernel", FP32, "DRAM")],
    f"{LESSONS}/04_occupancy/reference.ncu-rep": [("walk_kernel", FP32, "DRAM")],
    # lesson 5: fp16 inputs. tl.dot on small tiles re-reads A and B from DRAM; the rank-1 version converts each value
    # to fp32 and multiplies-adds on the FMA units (the issue's "6% of the FP16 roof"); the naive broadcast multiply
    # and sum of fp32 values is compiled to TF32 tensor-core MMAs (its SASS: HMMA.1688.F32.TF32)
    f"{LESSONS}/05_tensor_cores/attempt_small_tiles.ncu-rep": [("matmul_kernel", BF16, "DRAM")],
    f"{LESSONS}/05_tensor_cores/example_rank1.ncu-rep": [("matmul_kernel", FP32, FP32)],
    f"{LESSONS}/05_tensor_cores/naive.ncu-rep": [("matmul_kernel", TF32, TF32)],
    f"{LESSONS}/05_tensor_cores/reference.ncu-rep": [("matmul_kernel", BF16, BF16)],
    # lesson 6: softmax in fp32; a row max is comparisons only
    f"{LESSONS}/06_fusion/attempt_two_kernels.ncu-rep": [("row_stats_kernel", FP32, "DRAM"), ("normalize_kernel", FP32, "DRAM")],
    f"{LESSONS}/06_fusion/naive.ncu-rep": [
        ("row_max_kernel", None, "DRAM"),
        ("exp_sum_kernel", FP32, "DRAM"),
        ("normalize_kernel", FP32, "DRAM"),
    ],
    f"{LESSONS}/06_fusion/reference.ncu-rep": [("softmax_kernel", FP32, "DRAM")],
    # lesson 7: fp32 row sums, the second pass adding 64 partial sums per row
    f"{LESSONS}/07_reductions/attempt_split2.ncu-rep": [("partial_sum_kernel", FP32, "DRAM"), ("finish_kernel", FP32, "DRAM")],
    f"{LESSONS}/07_reductions/example_atomics.ncu-rep": [("partial_sum_kernel", FP32, "DRAM")],
    f"{LESSONS}/07_reductions/naive.ncu-rep": [("row_sum_kernel", FP32, "DRAM")],
    f"{LESSONS}/07_reductions/reference.ncu-rep": [("partial_sum_kernel", FP32, "DRAM"), ("finish_kernel", FP32, "DRAM")],
    # lesson 8: an fp32 matrix-vector product, lesson 9: an fp32 layer norm, lesson 10: fp32 RoPE
    f"{LESSONS}/08_latency/attempt_stages.ncu-rep": [("gemv_kernel", FP32, "DRAM")],
    f"{LESSONS}/08_latency/example_wide.ncu-rep": [("gemv_kernel", FP32, "DRAM")],
    f"{LESSONS}/08_latency/naive.ncu-rep": [("gemv_kernel", FP32, "DRAM")],
    f"{LESSONS}/08_latency/reference.ncu-rep": [("gemv_kernel", FP32, "DRAM")],
    f"{LESSONS}/09_optimize/attempt_params.ncu-rep": [("layernorm_kernel", FP32, "DRAM")],
    f"{LESSONS}/09_optimize/naive.ncu-rep": [("layernorm_kernel", FP32, "DRAM")],
    f"{LESSONS}/09_optimize/reference.ncu-rep": [("layernorm_kernel", FP32, "DRAM")],
    f"{LESSONS}/10_capstone/attempt_per_token.ncu-rep": [("rope_kernel", FP32, "DRAM")],
    f"{LESSONS}/10_capstone/naive.ncu-rep": [("rope_kernel", FP32, "DRAM")],
    f"{LESSONS}/10_capstone/reference.ncu-rep": [("rope_kernel", FP32, "DRAM")],
    # the samples (kernel_lab/samples/kernels/*.py): a bf16 tl.dot GEMM; fp32 FMA chains (compute_bound, tail_effect,
    # the divergent lanes' recurrence), far from DRAM; integer pointer chasing; bf16 inputs widened to fp32 by a shift
    # and multiplied-added on the FMA units (tensor_cores_unused); fp32 adds, scales and stencils streaming memory;
    # transposes and a strided copy with no arithmetic
    "kernel_lab/samples/bf16_gemm.ncu-rep": [("matmul_kernel", BF16, BF16)],
    "kernel_lab/samples/compute_bound.ncu-rep": [("poly_kernel", FP32, FP32)],
    "kernel_lab/samples/latency_bound.ncu-rep": [("pointer_chase", None, "DRAM")],
    "kernel_lab/samples/launch_overhead.ncu-rep": [("tiny_add_kernel", FP32, "DRAM")],
    "kernel_lab/samples/low_occupancy_registers.ncu-rep": [("chase_heavy_regs", FP32, "DRAM")],
    "kernel_lab/samples/low_occupancy_shared.ncu-rep": [("chase_big_smem", FP32, "DRAM")],
    "kernel_lab/samples/memory_bound.ncu-rep": [("add_kernel", FP32, "DRAM")],
    "kernel_lab/samples/register_spills.ncu-rep": [("stencil_spill_kernel", FP32, "DRAM")],
    "kernel_lab/samples/shared_bank_conflicts.ncu-rep": [("transpose_naive_smem", None, "DRAM")],
    "kernel_lab/samples/small_grid.ncu-rep": [("scale_small_grid_kernel", FP32, "DRAM")],
    "kernel_lab/samples/tail_effect.ncu-rep": [("uniform_work_kernel", FP32, FP32)],
    "kernel_lab/samples/tensor_cores_unused.ncu-rep": [("matmul_fma_bf16", FP32, FP32)],
    "kernel_lab/samples/transpose_padded.ncu-rep": [("transpose_padded_smem", None, "DRAM")],
    "kernel_lab/samples/uncoalesced_global.ncu-rep": [("strided_copy_kernel", None, "DRAM")],
    "kernel_lab/samples/warp_divergence.ncu-rep": [("divergent_kernel", FP32, FP32)],
    # tests/data/race: an fp32 elementwise GELU
    "tests/data/race/gelu_block16_v000.ncu-rep": [("gelu_kernel", FP32, "DRAM")],
}
#: the two idioms of all the half-precision instructions these reports execute (read off their SASS)
MOVE = re.compile(r"HFMA2\.MMA R\d+, -RZ, RZ, [^,]+, [^,]+")  # -0 x 0 + (constant, constant)
CONVERT = re.compile(r"HADD2\.F32 R\d+, -RZ, R\d+\.H[01]_H[01]")  # -0 + a half: the half as an fp32
HALF = re.compile(r"(?:@!?U?P\w+\s+)?(H(?:ADD|MUL|FMA)2\S*\s.*)")


def recorded() -> list[str]:
    """Every .ncu-rep the package, the course and the tests hold (the suite's are compressed: see below)."""
    found = [*ROOT.glob("kernel_lab/**/*.ncu-rep"), *ROOT.glob("tests/data/**/*.ncu-rep")]
    return sorted(str(p.relative_to(ROOT)) for p in found)


def test_every_recorded_report_is_in_the_table():
    assert recorded() == sorted(EXPECTED)


@pytest.mark.parametrize("path", sorted(EXPECTED))
def test_each_kernel_sits_under_the_roof_of_the_work_it_does(path):
    kernels = report.load(ROOT / path).kernels
    placed = [(k.name, (r := roofline(k)).precision, r.reached()[1]) for k in kernels]
    assert placed == EXPECTED[path]
    without_sass = [roofline(replace(k, not_flops=None)).precision for k in kernels]
    assert without_sass == [p for _, p, _ in EXPECTED[path]]  # the rule without SASS counters places them alike


def half_instructions(path: Path) -> list[list[tuple[str, float]]]:
    """Per kernel: each executed half-precision add, multiply or FMA of its SASS and its thread instructions."""
    out = []
    for action in [a for rng in ncu_report.load_report(str(path)) for a in rng]:
        counts = action.metric_by_name("thread_inst_executed_true")
        pcs = counts.correlation_ids()
        found = [
            (HALF.fullmatch(action.sass_by_pc(pcs.value(i)).strip()), counts.value(i)) for i in range(counts.num_instances())
        ]
        out.append([(m[1], n) for m, n in found if m and n])
    return out


@pytest.mark.parametrize("path", sorted(EXPECTED))
def test_the_half_instructions_set_aside_are_moves_and_conversions_by_the_sass(path):
    kernels = report.load(ROOT / path).kernels
    for k, half in zip(kernels, half_instructions(ROOT / path), strict=True):
        assert all(MOVE.fullmatch(s) or CONVERT.fullmatch(s) for s, _ in half), half  # no half arithmetic here
        assert idioms(k) == pytest.approx(sum(n for _, n in half))  # and every one of them is set aside
        assert not _flop_rates(k).get("FP16")


def test_the_issue_s_kernels_were_on_the_fp16_roof_by_nsight_compute_s_counts():
    """What the fix is about: counted as Nsight Compute counts them, the idioms made these fp32 kernels FP16."""
    for lesson, version in (("01_roofline", "naive"), ("05_tensor_cores", "example_rank1")):
        (k,) = report.load(course.report(lesson, version)).kernels
        counted_as_ncu = replace(k, not_flops={})  # no instruction set aside
        assert roofline(counted_as_ncu).precision == "FP16"
        assert roofline(k).precision == FP32


def suite_report(name: str) -> Path:
    spec = importlib.util.spec_from_file_location("summarize", ROOT / "tests" / "data" / "suite" / "summarize.py")
    assert spec and spec.loader
    summarize = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(summarize)
    return summarize.report_path(name)


#: kernels of tests/data/suite with half-precision instructions: (precision, and without the SASS counters)
SUITE = {
    "hgemm_half2_cuda": ("FP16", "FP16"),  # a half2 GEMM: HFMA2 on real operands, 17x its FP32 instructions
    "poly_horner_fp16_triton": ("FP16", "FP16"),  # a Horner polynomial in fp16, no FP32 instruction
    "matmul_bcast_fp16_triton": (FP32, FP32),  # fp16 products (HMUL2) summed in fp32: more fp32 FLOPs
    "acf_lags_reread_fp16_triton": (FP32, FP32),  # fp16 loads converted, fp32 math
    "aos_field_read_fp16_triton": (FP32, "FP16"),  # conversions 3x its fp32 instructions: without SASS, FP16
    "histogram_global_atomic_cuda": (None, "FP16"),  # integer counts: its only half instructions are moves
    "bitonic_regs_fp16_cuda": (None, "FP16"),  # a sorting network compares and swaps, it computes nothing
    "topk_itermax_fp16_triton": (None, "FP16"),
}


@pytest.mark.parametrize("name", sorted(SUITE))
def test_real_half_work_stays_and_moves_go_in_the_suite(name):
    (k,) = report.load(suite_report(name)).kernels
    assert (roofline(k).precision, roofline(replace(k, not_flops=None)).precision) == SUITE[name]


def test_lesson_1_s_arrow_points_up_from_the_naive_add_to_its_fix():
    """The fix moves its bytes faster, at the DRAM roof that bounds both, and so does its (fp32) arithmetic."""
    s = course.solution("01_roofline.fix")
    old, new = s.before.main.roofline, s.after.main.roofline
    assert old.reached()[1] == new.reached()[1] == "DRAM" and new.byte_rates["DRAM"] > 2 * old.byte_rates["DRAM"]
    assert new.flop_rate > old.flop_rate
    fig = s.roofline()
    (arrow,) = [a for a in fig.layout.annotations if a.showarrow]
    assert arrow.y > arrow.ay  # log10 of TFLOP/s: the fix is above the naive add
    naive, fix = (t for t in fig.data if t.name in ("naive (add_kernel)", "reference (add_kernel)"))
    assert (arrow.ay, arrow.y) == pytest.approx((math.log10(naive.y[0]), math.log10(fix.y[0])))
    assert "37% of the DRAM roof" in arrow.hovertext and "90% of the DRAM roof" in arrow.hovertext
