"""What a user without a GPU is told is true: a replayed report of another kernel says so on its first line, a cell
too big for Triton's CPU interpreter is refused at once with how small to make it, every CPU time is qualified, and
nothing is chosen on knobs the interpreter cannot time."""

from __future__ import annotations

import re
from pathlib import Path

from kernel_lab import analyze, samples
from kernel_lab.cells import CellSource
from kernel_lab.profiling.replay import ReplayProfiler
from kernel_lab.rewrite.base import Measured, RewriteContext
from kernel_lab.rewrite.launch import INTERPRETED, launches
from kernel_lab.rewrite.search import SearchRewriter
from kernel_lab.session import Session, speed
from kernel_lab.settings import Settings
from kernel_lab.verify import Judge, Options

CELLS = Path(__file__).resolve().parent / "cells"
REPLAY = samples.report("memory_bound")


def replayed(source: str) -> str:
    return str(analyze(ReplayProfiler(REPLAY).collect(CellSource(source), Settings())))


def test_a_replayed_report_of_another_kernel_says_so_on_its_first_line():
    recorded = {k.name for k in ReplayProfiler(REPLAY).collect(CellSource("x = 1\n"), Settings()).kernels}
    other = (CELLS / "add_ref.py").read_text().replace("add_kernel", "scale_rows_kernel")
    first = " ".join(replayed(other).split("\n\n")[0].split())  # the first line, as wrapped at 100 columns
    assert first.startswith("Kernel Lab: REPLAYING") and "does not match this cell" in first and "scale_rows_kernel" in first
    same = (CELLS / "add_ref.py").read_text().replace("add_kernel", sorted(recorded)[0].split("(")[0])
    assert "does not match" not in replayed(same)  # the report's own kernel: nothing to say


SLOW = (CELLS / "sized_add_ref.py").read_text().replace("def run(x, y):\n", "def run(x, y):\n    __import__('time').sleep(0.2)\n")


def test_a_cell_too_slow_for_the_interpreter_is_refused_before_any_candidate_saying_how_small_to_make_it():
    with Judge(SLOW, Options(timeout=5.0), "cpu") as judge:
        refused = judge.refused()
    assert refused is not None and refused.failure == "too_slow", refused
    assert re.search(r"takes 0\.\d\d s a call in Triton's CPU interpreter", refused.reason), refused.reason  # 0.2 s or more
    assert re.search(r"about \d+x smaller", refused.reason)
    with Judge((CELLS / "sized_add_ref.py").read_text(), Options(timeout=120.0), "cpu") as judge:
        assert judge.refused() is None  # milliseconds a call: candidates fit their time


def test_optimize_stops_at_once_on_a_cell_too_slow_for_the_interpreter(tmp_path):
    import kernel_lab

    result = kernel_lab.optimize(SLOW, rounds=2, root=tmp_path, replay=REPLAY, verify_timeout=5.0)
    assert result.stopped.startswith("nothing can be judged: the reference takes") and len(result.session.versions) == 1


def test_cpu_speedups_carry_their_qualifier_and_ties_are_not_broken_on_what_the_interpreter_cannot_time(tmp_path):
    s = Session.create(tmp_path, "x", "original")
    timed = {"origin": "search", "correct": True, "significant": True, "reference_ms": 26.0, "interpreted": True}
    first = s.add("a", **timed, time_ms=11.2, spread_ms=1.5, speedup=2.32, screen_ms=12.7)
    s.add("b", **timed, time_ms=10.9, spread_ms=1.8, speedup=2.39, screen_ms=9.1)  # tied; the screen's "fastest"
    assert s.best() is first and "cannot time launch parameters" in (s.why_best() or "")
    assert (
        speed(first) == "2.32x (Triton's CPU interpreter, not a GPU speedup)" and speed(first, short=True) == "2.32x on the CPU"
    )
    from kernel_lab.display.versions import text
    from kernel_lab.results.optimize import OptimizeResult

    assert "Best: v001, 2.32x (Triton's CPU interpreter, not a GPU speedup) faster" in " ".join(
        text(OptimizeResult(s, "ran 1 round(s)")).split()
    )


def test_the_search_leaves_num_warps_alone_where_the_interpreter_times_the_variants():
    source = (CELLS / "sized_add_ref.py").read_text().replace("BLOCK=1024)", "BLOCK=1024, num_warps=4)")
    asked: list[str] = []

    def measure(sources: list[str]) -> Measured:
        asked.extend(sources)
        return Measured(tuple(10.0 - 0.001 * i for i, _ in enumerate(sources)))

    context = RewriteContext(source, [{"kind": "memory_bound", "kernel": "add_kernel"}], interpreted=True)
    explored = SearchRewriter().explore(context, measure, n=2, budget_s=30, most=12)
    assert asked and all(launches(s)[0].params.get("num_warps", 4) == 4 for s in asked)
    assert any("num_warps and num_stages left as written: " + INTERPRETED in note for note in explored.notes)
    on_gpu = SearchRewriter().explore(RewriteContext(source, context.bottlenecks), measure, n=2, budget_s=30, most=12)
    assert not any(INTERPRETED in note for note in on_gpu.notes)
