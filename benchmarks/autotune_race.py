"""The built-in optimizer against ``triton.autotune`` on naive Triton cells (issue #15; run on the GPU).

    python benchmarks/autotune_race.py [--rounds 3] [--candidates 2] [--after-profile S] [NAME ...]

For each cell of benchmarks/race/ (or those named), side by side in one process, one job at a time:

* the original, ``triton.autotune``'s best and the built-in optimizer's best, each timed here with
  ``triton.testing.do_bench`` (L2 flushed, median) on the cell's first declared shape, and torch's own op;
* autotune's wall time: compiling and benchmarking its configurations (the first call), on an empty Triton
  cache; the configurations are the product of the same knobs the optimizer searches, over the usual
  values (1-D blocks 64..8192 or 128..8192 with warps 1..16 and, for loops, 1..4 stages; tiles 64..256
  (K 32..64), warps 4/8, stages 3/4, group 1/8), less those that do not fit (:func:`kernel_lab.rewrite.space.feasible`);
* the optimizer's wall time (``kernel_lab.optimize``: ncu profiles, the screen, the judge) on an empty
  Triton cache, with the share spent profiling, the time its answer was known (the best version verified, before
  the profile of that version for the before/after view), and the best version's position on its roof.

``--after-profile S``: as a notebook user meets ``%%optimize`` after ``%%profile`` of the same cell: the cell is
profiled first (``kernel_lab.profile``, outside the clock), the processes the call takes are started ahead as the
notebook then does (``kernel_lab.api.start_ahead``), S seconds pass (reading the hints), and the optimizer's clock
starts at the call, which starts from that profile. The table says which mode it ran.

Cells whose name starts with "held_out" are reported apart: no part of the search was tuned on them.
``--replay REPORT`` runs the optimizer on a recorded report (no ncu), for a dry run on the CPU.
``--spent``: where the optimizer's time went, per cell (the screen's and the judge's steps, ncu), the largest first.
"""

from __future__ import annotations

import argparse
import ast
import itertools
import math
import os
import re
import tempfile
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import torch
from judge_round import SPANS, SPENT, instrument, print_spent, print_timeline, timed

import kernel_lab
from kernel_lab.profiling.ncu import NcuProfiler
from kernel_lab.rewrite import search, space
from kernel_lab.rewrite.launch import DEFAULTS, GROUP_NAME, Launch, launches, side
from kernel_lab.verify import judge as J
from kernel_lab.verify import screen
from kernel_lab.verify import turns as T
from kernel_lab.verify import workers as W

HERE = Path(__file__).resolve().parent / "race"
HELD_OUT = ("rowsum_tiny", "matmul_grouped", "softmax_poor_block")  # not looked at while building the search
TEACHING = Path(__file__).resolve().parent / "teaching"


def load(source: str, name: str) -> ModuleType:
    path = Path(tempfile.mkdtemp()) / f"{name}.py"
    path.write_text(source)  # Triton reads a kernel's source from its file
    module = ModuleType(name)
    module.__file__ = str(path)
    exec(compile(source, str(path), "exec"), module.__dict__)  # noqa: S102 - the benchmark's own cells
    return module


def values(launch: Launch) -> dict[str, tuple[int, ...]]:
    """autotune's grid: the knobs of the launch over the usual values (see the module docstring)."""
    grid: dict[str, tuple[int, ...]] = {}
    for name in space.space(launch):
        if name == "num_warps":
            grid[name] = (4, 8) if launch.dots else (1, 2, 4, 8, 16)
        elif name == "num_stages":
            grid[name] = (3, 4) if launch.dots else (1, 2, 3, 4)
        elif GROUP_NAME.search(name):
            grid[name] = (1, 8)
        elif side(name) and launch.dots:
            grid[name] = (32, 64) if side(name) == "K" else (64, 128, 256)
        else:
            grid[name] = (128, 256, 512, 1024, 2048, 4096, 8192) if launch.loops else tuple(1 << i for i in range(6, 14))
    return grid


def autotuned(source: str) -> tuple[str, int]:
    """The cell with its kernel under ``triton.autotune`` over :func:`values`, and the number of configs."""
    launch = launches(source)[0]
    grid = values(launch)
    configs = [dict(zip(grid, v)) for v in itertools.product(*grid.values())]
    configs = [c for c in configs if space.feasible(launch, c)]
    spelled = ", ".join(
        f"triton.Config({ {k: v for k, v in c.items() if k not in DEFAULTS} }, "
        f"num_warps={c['num_warps']}, num_stages={c.get('num_stages', 3)})"
        for c in configs
    )
    tree = ast.parse(source)
    kernel = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == launch.kernel)
    lines = source.splitlines(keepends=True)
    for node, name in launch.grid_sites:
        node.value = f"@@{name}@@"
    new_grid = "lambda META: " + re.sub(r"['\"]@@(\w+)@@['\"]", r"META['\1']", ast.unparse(launch.grid))
    keep = [ast.unparse(a) for a in launch.call.args] + [
        f"{k.arg}={ast.unparse(k.value)}" for k in launch.call.keywords if k.arg not in grid
    ]
    call = f"{launch.kernel}[{new_grid}]({', '.join(keep)})"
    start = sum(len(s) for s in lines[: launch.call.lineno - 1]) + launch.call.col_offset
    end = sum(len(s) for s in lines[: (launch.call.end_lineno or 1) - 1]) + (launch.call.end_col_offset or 0)
    source = source[:start] + call + source[end:]
    at = sum(len(s) for s in lines[: kernel.decorator_list[0].lineno - 1])
    source = source[:at] + f"@triton.autotune(configs=[{spelled}], key=[])\n" + source[at:]
    return source, len(configs)


def bench(fn: Any) -> float:
    import triton.testing

    if not torch.cuda.is_available():
        fn()
        start = time.perf_counter()
        fn()
        return (time.perf_counter() - start) * 1e3
    return float(triton.testing.do_bench(fn, warmup=25, rep=200, return_mode="median"))


def instrument_all() -> None:
    """The judge's steps (judge_round.instrument), the screen's and ncu's, timed into SPENT."""
    instrument()
    S = screen.Screener
    S._start = timed("screen: the original loaded in its workers", S._start)
    S.screen = timed("screen: whole calls", S.screen)
    S._time = timed("screen: timing one variant", S._time)
    S.rest = timed("screen: workers stopped and restarted", S.rest)
    W.Worker.ask = timed("asked the ", W.Worker.ask, lambda self, request, *a, **k: f"{self.who}: {request.get('cmd')}")
    W.Worker.answer = timed("answered, the ", W.Worker.answer, lambda self, request, *a, **k: f"{self.who}: {request.get('cmd')}")
    J.Judge.wait_prepared = timed("screen: waited for the reference's results", J.Judge.wait_prepared)
    T.Turns._start_timing = timed("screen: waited for its turn on the GPU", T.Turns._start_timing)
    T.Turns._start_step = timed("judge: an input set of the reference waited for its turn", T.Turns._start_step)
    J.Judge.check_many = timed("judge: a round (check_many)", J.Judge.check_many)
    search.SearchRewriter.explore = timed("search: explore (screen calls)", search.SearchRewriter.explore)
    answered = W.Worker.answered

    def steps(self: W.Worker, *args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        header, tensors = answered(self, *args, **kwargs)
        if self.who == "candidate" and "params" in header:  # the answer to "load"
            SPENT["candidate: cell loaded (each, in parallel)"].append(time.perf_counter() - start)
        return header, tensors

    W.Worker.answered = steps
    load = S._load

    def loaded(self: screen.Screener, worker: W.Worker) -> W.Worker:
        ask = worker.answer
        worker.answer = lambda *a, **k: _took(ask(*a, **k))  # type: ignore[method-assign]
        return load(self, worker)

    S._load = loaded
    NcuProfiler.collect = timed("ncu: a profile", NcuProfiler.collect)


def _took(answer: tuple[dict[str, Any], list[Any]]) -> tuple[dict[str, Any], list[Any]]:
    """The screen worker's own times for the steps of loading the original (its answer's "took")."""
    for step, seconds in answer[0].get("took", {}).items():
        SPENT[f"screen load, in each worker: {step}"].append(seconds)
    return answer


def fresh_cache() -> None:
    os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="triton_cache_")


def race(
    path: Path, rounds: int, candidates: int, replay: str | None, sessions: str | None, after_profile: float | None
) -> dict[str, Any]:
    source = path.read_text()
    original = load(source, path.stem)
    torch.manual_seed(0)
    inputs = original.make_inputs(*original.SHAPES[0]) if hasattr(original, "SHAPES") else original.make_inputs()
    inputs = inputs if isinstance(inputs, tuple) else (inputs,)
    want = original.run(*inputs)
    row: dict[str, Any] = {"cell": path.stem, "original": bench(lambda: original.run(*inputs))}
    row["torch"] = bench(lambda: original.torch_run(*inputs)) if hasattr(original, "torch_run") else None

    fresh_cache()
    tuned_source, row["configs"] = autotuned(source)
    tuned = load(tuned_source, path.stem + "_autotuned")
    if not torch.cuda.is_available():  # autotune needs a GPU driver: a dry run only checks the autotuned cell loads
        tuned = original
    started = time.monotonic()
    got = tuned.run(*inputs)
    torch.cuda.synchronize() if torch.cuda.is_available() else None
    row["autotune_wall"] = time.monotonic() - started
    torch.testing.assert_close(got.float(), want.float(), rtol=2e-2, atol=2e-2)
    row["autotune"] = bench(lambda: tuned.run(*inputs))
    row["autotune_config"] = str(getattr(getattr(tuned, launches(source)[0].kernel), "best_config", "–"))

    fresh_cache()
    first = None
    if after_profile is not None and replay is None:  # %%profile, then %%optimize of the same cell
        first = kernel_lab.profile(path).profile
        kernel_lab.api.start_ahead()
        time.sleep(after_profile)
    SPENT.clear()
    SPANS.clear()
    clock = time.perf_counter()
    marks: list[tuple[float, str, int | None]] = []  # (seconds, state, round): the last profile has no round
    started = time.monotonic()
    outcome = kernel_lab.optimize(
        path,
        rounds=rounds,
        candidates=candidates,
        root=sessions or tempfile.mkdtemp(prefix="race_sessions_"),
        replay=replay,
        profile=first,
        on_event=lambda e: (
            marks.append((time.monotonic() - started, e.state or "", e.round)),
            print(f"  {marks[-1][0]:6.1f} s  {e.message}", flush=True),
        ),
    )
    row["ours_wall"] = time.monotonic() - started
    print_spent("    ")
    if SPANS:
        print_timeline("    ", clock, clock + row["ours_wall"])
    marks.append((row["ours_wall"], "", None))
    row["ours_profiling"] = sum(b[0] - a[0] for a, b in itertools.pairwise(marks) if a[1] == "profiling")
    # the answer is known once the loop stops, before the best version is profiled for the before/after view
    row["ours_answer"] = next((t for t, state, round_ in marks if state == "profiling" and round_ is None), row["ours_wall"])
    best = outcome.best
    mine = load(best.source, path.stem + "_best")
    got = mine.run(*inputs)
    torch.testing.assert_close(got.float(), want.float(), rtol=2e-2, atol=2e-2)
    row["ours"] = bench(lambda: mine.run(*inputs))
    row["ours_change"] = best.explanation.split(": ")[1] if best is not outcome.session.original else "kept the original"
    row["stopped"] = outcome.stopped
    report = outcome.session.folder(best) / "profile.ncu-rep"
    row["roof"] = "–"
    if report.exists() and replay is None:
        reached = kernel_lab.diagnose(report).rooflines[0].reached()
        row["roof"] = f"{reached[0]:.0%} {reached[1]}" if reached else "–"
    print(row, flush=True)
    return row


def table(rows: list[dict[str, Any]], title: str) -> None:
    print(f"\n{title}")
    print(
        "| cell | original ms | built-in ms | autotune ms (configs, wall s) | torch ms | built-in / autotune"
        " | built-in: answer s, wall s (ncu s) | roof of built-in best |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        torch_ms = f"{r['torch']:.3f}" if r["torch"] else "–"
        print(
            f"| {r['cell']} | {r['original']:.3f} | {r['ours']:.3f} | {r['autotune']:.3f} ({r['configs']}, {r['autotune_wall']:.0f}) "
            f"| {torch_ms} | {r['ours'] / r['autotune']:.2f}× | {r['ours_answer']:.1f}, {r['ours_wall']:.1f} ({r['ours_profiling']:.1f}) | {r['roof']} |"
        )
    if rows:
        mean = math.exp(sum(math.log(r["ours"] / r["autotune"]) for r in rows) / len(rows))
        print(f"geometric mean of built-in / autotune time: {mean:.2f}× (below 1: the built-in optimizer is faster)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("names", nargs="*")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--candidates", type=int, default=2)
    parser.add_argument("--replay", default=None)
    parser.add_argument("--sessions", default=None, help="keep the optimizer's sessions (reports, versions) here")
    parser.add_argument("--after-profile", type=float, default=None, metavar="S", help="optimize after a profile (see above)")
    parser.add_argument("--spent", action="store_true", help="where the optimizer's time went (see above)")
    args = parser.parse_args()
    if args.spent:
        instrument_all()
    mode = (
        f"after a profile of the cell and {args.after_profile:g} s (the optimizer starts from it)"
        if args.after_profile is not None
        else "from scratch (the optimizer profiles the cell first)"
    )
    cells = {p.stem: p for p in sorted(HERE.glob("*.py"))}
    cells["softmax_poor_block"] = TEACHING / "softmax_poor_block.py"
    chosen = [cells[n] for n in args.names] if args.names else list(cells.values())
    rows = [race(p, args.rounds, args.candidates, args.replay, args.sessions, args.after_profile) for p in chosen]
    table([r for r in rows if r["cell"] not in HELD_OUT], f"Cells the search was built with (issue #15's three), {mode}")
    table([r for r in rows if r["cell"] in HELD_OUT], f"Held-out cells (not looked at while building the search), {mode}")


if __name__ == "__main__":
    main()
