"""The judge (kernel_lab.verify), run for real: worker subprocesses, Triton kernels interpreted on the CPU.

Every cell in tests/cells/ is judged once, concurrently, in a module fixture (each judgement is a
subprocess that imports torch); the tests then assert on the verdicts.
"""
from __future__ import annotations

import math
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from kernel_lab.verify import Timing, Verdict, verify

pytest.importorskip("triton")

CELLS = Path(__file__).parent / "cells"
HANG_TIMEOUT = 15.0


def source(name: str) -> str:
    return (CELLS / f"{name}.py").read_text()


EXIT_139 = source("add_crash").replace("os.kill(os.getpid(), signal.SIGSEGV)", "os._exit(139)")

#: case -> (reference cell, candidate cell or source, verify keywords)
CASES: dict[str, tuple[str, str, dict]] = {
    "correct": ("add_ref", "add_fast", {"time": True}),
    "softmax_rows": ("softmax_ref", "softmax_rows", {}),
    "softmax_offbyone": ("softmax_ref", "softmax_offbyone", {}),
    "softmax_narrow": ("softmax_ref", "softmax_narrow", {}),
    "unwritten": ("add_ref", "add_unwritten", {}),
    "leftover": ("add_ref", "add_leftover", {}),
    "cached": ("add_ref", "add_cached", {}),
    "zeros_vs_zeros": ("zeros_ref", "add_zeros", {}),
    "zeros_vs_add": ("add_ref", "add_zeros", {}),
    "dtype": ("half_ref", "half_as_float", {}),
    "fallback": ("add_ref", "add_fallback", {}),
    "library": ("mm_ref", "mm_torch", {}),
    "hang": ("add_ref", "add_hang", {"timeout": HANG_TIMEOUT}),
    "syntax": ("add_ref", "add_syntax", {}),
    "triton_error": ("add_ref", "add_triton_error", {}),
    "segfault": ("add_ref", "add_crash", {}),
    "exit_139": ("add_ref", EXIT_139, {}),
    "nan": ("add_ref", "add_nan", {}),
    "inplace": ("add_ref", "add_inplace", {}),
    "too_fast": ("slow_ref", "add_fallback", {"time": True}),
    "no_run": ("add_ref", "import torch\n", {}),
}


def judge(reference: str, candidate: str, keywords: dict) -> Verdict:
    candidate_source = candidate if "\n" in candidate else source(candidate)
    options = {"time": False, "timeout": 60.0, "device": "cpu", **keywords}
    return verify(source(reference), candidate_source, **options)


@pytest.fixture(scope="module")
def verdicts() -> dict[str, Verdict]:
    with ThreadPoolExecutor(max_workers=4) as pool:
        futures = {name: pool.submit(judge, *case) for name, case in CASES.items()}
        return {name: future.result() for name, future in futures.items()}


# --- correct candidates ---------------------------------------------------------------------------

def test_correct_rewrite_passes_and_is_timed(verdicts):
    v = verdicts["correct"]
    assert (v.correct, v.reason, v.warnings, v.checks) == (True, "ok", (), 3)
    assert v.max_abs_err == 0.0 and v.max_rel_err == 0.0
    t = v.timing
    assert t is not None and t.repeats >= 10
    assert t.reference_ms > 0 and t.candidate_ms > 0 and t.reference_spread >= 0 and t.candidate_spread >= 0
    assert t.speedup == pytest.approx(t.reference_ms / t.candidate_ms)
    assert v.summary().startswith("correct on 3 input sets") and "ms" in v.summary()


def test_shapes_with_odd_sizes_are_all_checked(verdicts):
    v = verdicts["softmax_rows"]  # 4 rows per program: rows 7 and 3 leave partly masked blocks
    assert (v.correct, v.reason, v.checks, v.timing) == (True, "ok", 9, None)  # 3 shapes x 3 seeds
    assert v.max_rel_err < 1e-5


def test_bug_that_shows_only_on_a_wide_shape_is_caught_there(verdicts):
    v = verdicts["softmax_narrow"]  # right for 64 and 33 columns; columns 64-99 of 100 are never written
    assert not v.correct and v.checks == 7  # 2 shapes x 3 seeds passed, the first set of the third failed
    # NaN where the poison held; on the CPU, malloc may hand small tensors other memory (wrong values then)
    assert v.reason.startswith("the candidate's output ") and "shape (3, 100); first call" in v.reason


# --- wrong results ----------------------------------------------------------------------------------

def test_off_by_one_mask_gives_wrong_values(verdicts):
    v = verdicts["softmax_offbyone"]
    assert not v.correct and v.checks == 1 and v.timing is None
    assert v.reason.startswith("the candidate's output differs from the reference by up to")
    assert "more than the tolerance" in v.reason and re.search(r"index \[\d+, 63\]", v.reason)  # the last column
    assert "shape (16, 64); first call" in v.reason
    assert v.max_abs_err > 0.01


def test_unwritten_elements_are_caught_by_the_nan_poison(verdicts):
    v = verdicts["unwritten"]  # 19 programs of 1024 cover 19456 of 20000 elements
    assert not v.correct
    assert "has 544 NaN values where the reference has numbers (first at index [19456])" in v.reason
    assert "left unwritten" in v.reason


def test_returning_the_reference_leftover_fails_on_the_second_call(verdicts):
    v = verdicts["leftover"]  # right on its first call, uninitialized memory afterwards
    assert not v.correct and v.checks == 1
    assert "NaN" in v.reason and "second call, after the reference ran" in v.reason


def test_cached_result_fails_on_new_inputs(verdicts):
    v = verdicts["cached"]  # both calls on input set 1 pass; input set 2 gets set 1's answer
    assert not v.correct and v.checks == 2
    assert "differs from the reference" in v.reason and "input set 2 of 3: seed 1; first call" in v.reason


def test_near_constant_reference_is_refused(verdicts):
    v = verdicts["zeros_vs_zeros"]
    assert not v.correct and v.timing is None
    assert v.reason == ("the reference's output is (near) constant (input set 1 of 3: seed 0): cannot judge "
                        "correctness; use inputs that give varied outputs")


def test_zeros_against_a_varied_reference_are_wrong_and_own_make_inputs_is_ignored(verdicts):
    v = verdicts["zeros_vs_add"]  # its own make_inputs (y = -x) would make zeros right
    assert not v.correct and "differs from the reference" in v.reason and "0 instead of" in v.reason
    assert v.max_rel_err == 1.0


def test_changed_dtype_fails(verdicts):
    v = verdicts["dtype"]
    assert not v.correct
    assert "has dtype torch.float32 but the reference's has torch.float16" in v.reason
    assert "keep the precision the reference declares" in v.reason


def test_nan_in_the_output_fails(verdicts):
    v = verdicts["nan"]
    assert not v.correct and "has 20 NaN values" in v.reason and "first at index [7]" in v.reason


def test_modified_inputs_fail(verdicts):
    v = verdicts["inplace"]
    assert not v.correct
    assert "the candidate changed its input y, which the reference leaves unchanged" in v.reason


# --- cheats that pass with a warning ------------------------------------------------------------------

def test_fallback_to_pytorch_is_flagged(verdicts):
    v = verdicts["fallback"]
    assert v.correct and v.checks == 3
    assert v.warnings == ("The candidate launched none of its own kernels: it may fall back to PyTorch.",)


def test_library_matmul_the_reference_does_not_use_is_flagged(verdicts):
    v = verdicts["library"]
    assert v.correct and len(v.warnings) == 2
    assert "launched none of its own kernels" in v.warnings[0]
    assert "library matrix-multiply" in v.warnings[1] and "aten::mm" in v.warnings[1]


def test_speedup_over_10x_is_flagged_and_significant(verdicts):
    v = verdicts["too_fast"]  # the reference sleeps 40 ms per call
    assert v.correct and v.timing is not None
    assert v.timing.speedup > 10 and v.timing.significant
    assert any("faster than the reference" in w and "second look" in w for w in v.warnings)
    assert "faster" in v.summary() and "warnings" in v.summary()


# --- candidates that never finish properly -----------------------------------------------------------

def test_hang_is_stopped_at_the_timeout(verdicts):
    v = verdicts["hang"]
    assert not v.correct and v.checks == 0
    # where it was stopped depends on how far the worker got on a loaded machine; that it was stopped does not
    assert f"did not finish within {HANG_TIMEOUT:g} s" in v.reason


def test_syntax_error_is_reported_with_its_line(verdicts):
    v = verdicts["syntax"]
    line = next(i for i, text in enumerate(source("add_syntax").splitlines(), 1) if text.startswith("def run(") and not text.endswith(":"))
    assert not v.correct and v.reason == f"the candidate does not compile: SyntaxError: expected ':' at line {line}"


def test_triton_compile_error_is_reported(verdicts):
    v = verdicts["triton_error"]
    assert not v.correct and v.reason.startswith("the candidate raised ")
    assert "arange's range must be a power of 2" in v.reason and "input set 1 of 3" in v.reason


def test_segfault_is_reported(verdicts):
    v = verdicts["segfault"]
    assert not v.correct and v.reason == "the candidate crashed (signal 11, SIGSEGV) on input set 1 of 3: seed 0"


def test_process_exit_is_reported(verdicts):
    v = verdicts["exit_139"]
    assert not v.correct
    assert v.reason == "the candidate ended the process with exit status 139 on input set 1 of 3: seed 0"


def test_cell_without_run_is_reported(verdicts):
    v = verdicts["no_run"]
    assert not v.correct and v.reason.startswith("the candidate defines no run(*inputs) function")


# --- pure pieces ------------------------------------------------------------------------------------

def test_timing_is_significant_only_beyond_the_noise():
    fast = Timing.from_samples([10.0, 10.1, 10.2, 10.3, 10.4], [5.0, 5.1, 5.2, 5.3, 5.4])
    assert (fast.reference_ms, fast.candidate_ms, fast.speedup, fast.significant) == (10.2, 5.2, 10.2 / 5.2, True)
    assert fast.reference_spread == pytest.approx(0.2) and fast.repeats == 5
    overlap = Timing.from_samples([10.0, 10.5, 11.0, 11.5, 12.0], [9.0, 10.0, 10.4, 11.0, 11.2])
    assert not overlap.significant
    tiny = Timing.from_samples([10.00, 10.01, 10.02], [9.90, 9.91, 9.92])  # apart, but only 1% faster
    assert not tiny.significant


def test_tolerances_follow_the_reference_dtype():
    torch = pytest.importorskip("torch")
    from kernel_lab.verify.worker import compare, near_constant, tolerance, uses_tf32

    assert tolerance(torch.float32, False, None, None) == (1e-4, 1e-5)
    assert tolerance(torch.float32, True, None, None) == (1e-2, 1e-2)
    assert tolerance(torch.bfloat16, False, None, None) == (2e-2, 1e-2)
    assert tolerance(torch.float16, False, None, 0.5) == (1e-2, 0.5)
    assert tolerance(torch.int32, False, None, None) == (0.0, 0.0)
    assert uses_tf32("acc += tl.dot(a, b)") and not uses_tf32('tl.dot(a, b, input_precision="ieee")')
    ref = torch.linspace(-4, 4, 100)
    assert compare(ref + 3e-4, ref, 1e-4, 1e-5)[0] is None  # within 1e-5 + 1e-4 * 4
    problem, (abs_err, rel_err) = compare(ref + 1e-3, ref, 1e-4, 1e-5)
    assert problem.startswith("differs from the reference by up to 0.001") and "tolerance 0.00041" in problem
    assert rel_err == pytest.approx(abs_err / 4) and abs_err == pytest.approx(1e-3, rel=1e-3)
    assert "has dtype torch.float64" in compare(ref.double(), ref, 1e-4, 1e-5)[0]
    inf = ref.clone()
    inf[3] = math.inf
    assert compare(inf, inf.clone(), 1e-4, 1e-5)[0] is None  # same infinities in the same places pass
    assert "infinite values" in compare(inf, ref, 1e-4, 1e-5)[0]
    assert near_constant(torch.zeros(10)) and near_constant(torch.full((10,), 3.0)) and not near_constant(ref)


# --- on a GPU -----------------------------------------------------------------------------------------

def judge_on_gpu(reference: str, candidate: str, **keywords) -> Verdict:
    return verify(source(reference), source(candidate), **{"time": False, "timeout": 300.0, "device": "cuda", **keywords})


@pytest.mark.gpu
def test_gpu_honest_rewrite_is_timed_without_warnings():
    v = judge_on_gpu("add_ref", "add_fast", time=True)
    assert (v.correct, v.reason, v.warnings) == (True, "ok", ())
    assert v.timing is not None and v.timing.repeats >= 10 and v.timing.candidate_ms > 0


@pytest.mark.gpu
def test_gpu_unwritten_elements_and_leftovers_hit_the_poisoned_cache():
    unwritten = judge_on_gpu("add_ref", "add_unwritten")
    assert not unwritten.correct and "has 544 NaN values" in unwritten.reason
    leftover = judge_on_gpu("add_ref", "add_leftover")
    assert not leftover.correct and "NaN" in leftover.reason and "second call" in leftover.reason


@pytest.mark.gpu
def test_gpu_library_gemm_is_flagged():
    v = judge_on_gpu("mm_ref", "mm_torch")  # TF32 tl.dot against cuBLAS: the TF32 tolerance applies
    assert v.correct and "launched none of its own kernels" in v.warnings[0]
    assert "library matrix-multiply" in v.warnings[1] and "aten::mm" in v.warnings[1]


@pytest.mark.gpu
def test_gpu_work_hidden_on_a_side_stream_is_flagged():
    v = judge_on_gpu("add_ref", "add_side_stream", time=True)
    assert v.correct
    assert any("another CUDA stream" in w for w in v.warnings), v.warnings
