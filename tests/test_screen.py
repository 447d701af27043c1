"""Screening launch-parameter variants (kernel_lab.verify.screen) and the search that explores with it,
on the CPU with Triton's interpreter."""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

import kernel_lab
from kernel_lab import samples
from kernel_lab.rewrite import search, space
from kernel_lab.rewrite.base import Measured, RewriteContext
from kernel_lab.rewrite.launch import apply, launches, parameter_only, side
from kernel_lab.settings import Settings
from kernel_lab.verify import Judge, Options, workers
from kernel_lab.verify import screen as screen_module
from kernel_lab.verify.sandbox import warm_triton
from kernel_lab.verify.screen import Screener
from kernel_lab.verify.turns import Turns

CELLS = Path(__file__).resolve().parent / "cells"
ROOT = CELLS.parent.parent
ADD = (CELLS / "sized_add_ref.py").read_text()


def test_only_launch_parameters_of_the_cells_own_kernels_count_as_a_parameter_variant():
    launch = launches(ADD)[0]
    assert parameter_only(ADD, apply(ADD, launch, {"BLOCK": 256, "num_warps": 8, "num_stages": 2}))
    assert not parameter_only(ADD, ADD.replace("+ tl.load(y_ptr", "- tl.load(y_ptr"))  # the kernel's code
    assert not parameter_only(ADD, ADD.replace("torch.empty_like(x)", "torch.zeros_like(x)"))  # the harness
    assert not parameter_only(ADD, ADD.replace("x.numel(), BLOCK=1024", "x.numel() - 1, BLOCK=1024"))  # an argument
    assert not parameter_only(ADD, ADD + "\nimport os\n")
    assert not parameter_only(ADD, "def broken(:\n")


@pytest.mark.slow
def test_the_screen_times_right_variants_and_names_what_is_wrong_with_the_others():
    launch = launches(ADD)[0]
    right = apply(ADD, launch, {"BLOCK": 2048})
    unwritten = ADD.replace("cdiv(x.numel(), 1024)", "cdiv(x.numel(), 2048)")  # half the programs: a parameter, wrong
    rewritten = ADD.replace("+ tl.load(y_ptr", "- tl.load(y_ptr")
    with Screener(ADD, device="cpu", workers=2) as screen:  # two load the original at once
        waited = []  # the screen waits for the GPU to be quiet (the judge's reference at work) before it times

        @contextmanager
        def quiet() -> Iterator[None]:
            waited.append(len(screen._workers))
            yield

        screen.quiet = quiet
        original, (a, b, c) = screen.screen([right, unwritten, rewritten])
        assert waited == [2]
        loaded = [w.proc.pid for w in screen._workers]
        screen.rest()  # they hold a small share of the machine's memory: they stay loaded, idle, for the next round
        assert [w.proc.pid for w in screen._workers] == loaded and not screen._booted
        again, (d,) = screen.screen([right])
        assert waited == [2, 2]
        screen.keep_share = 1.5 * max(screen._held.values()) / screen._memory  # room for one: the other stops
        screen.rest()
        assert [w.proc.pid for w in screen._workers] == loaded[:1] and not screen._booted
        screen.keep_share = 0.0  # no room: they stop, and fresh processes start ahead for the next round, unloaded
        screen.rest()
        assert not screen._workers and len(screen._booted) == screen.count
        third, (e,) = screen.screen([right])
    assert original.ms and a.ms and a.ms > 0 and again.ms and d.ms and third.ms and e.ms
    assert b.ms is None and b.reason.startswith("output 0: ")
    assert c.ms is None and "not screened" in c.reason


@pytest.mark.slow
def test_the_screen_times_the_shape_the_judges_headline_times():
    """The declared shape whose inputs hold the most bytes, as the judge's headline (not the one whose sizes multiply
    to the most: here a second size that changes nothing the kernel reads)."""
    cell = ADD.replace("SHAPES = [(8192,), (4096,)]", "SHAPES = [(512, 1), (300, 4)]  # (n, heads)")
    cell = cell.replace("def make_inputs(n=8192):", "def make_inputs(n=512, heads=1):")
    with Screener(cell, device="cpu", workers=1) as screen:
        ran = screen.measure([apply(cell, launches(cell)[0], {"BLOCK": 256})]).launched
    assert ran["add_kernel"]["n"] == 512, ran  # the inputs of (512, 1): 4 KiB against 2.3 KiB


@pytest.mark.slow
def test_the_screen_times_in_full_only_the_variants_its_quick_look_puts_near_the_fastest(monkeypatch):
    launch = launches(ADD)[0]
    blocks = (16, 1024, 2048)  # 512 programs in the interpreter against 8 and 4: far behind
    variants = [apply(ADD, launch, {"BLOCK": b}) for b in blocks]
    asked: list[tuple[int, float, float]] = []  # (variant id, budget, median) of each timing the screen asked for
    ask = workers.Worker.ask

    def recording(self: workers.Worker, request: dict, *args: object, **kwargs: object) -> tuple:
        reply = ask(self, request, *args, **kwargs)
        if request["cmd"] == "time":
            asked.append((request["id"], request["budget_ms"], reply[0]["ms"]))
        return reply

    monkeypatch.setattr(workers.Worker, "ask", recording)
    with Screener(ADD, device="cpu", workers=2) as screen:
        original, got = screen.screen(variants)
        block = {}  # variant id -> its block size, from the file each was loaded from
        for path in screen.folder.glob("variant_*.py"):
            block[int(path.stem.split("_")[1])] = next(b for b in blocks if f"BLOCK={b}" in path.read_text())
    assert [(budget) for id, budget, _ in asked if id == -1] == [screen_module.TIME_BUDGET_MS]  # the original: in full
    quick = {block[id]: ms for id, budget, ms in asked if budget == screen_module.QUICK_MS}
    full = {block[id] for id, budget, _ in asked if id >= 0 and budget == screen_module.TIME_BUDGET_MS}
    assert sorted(quick) == sorted(blocks) and len(asked) == 1 + len(blocks) + len(full)
    assert full == {b for b, ms in quick.items() if ms <= screen_module.CONTENDER * min(quick.values())}
    assert 16 not in full and min(quick, key=lambda b: quick[b]) in full
    slow = got[blocks.index(16)]
    assert slow.ms == quick[16] and 3 <= slow.calls <= screen_module.QUICK_CALLS
    assert all(got[blocks.index(b)].ms for b in full) and original.ms


def test_a_timing_waits_for_the_background_step_under_way_and_later_steps_wait_for_the_timing():
    turns, log = Turns(), []
    in_step, go_on = threading.Event(), threading.Event()

    def background() -> None:  # the reference's preparation, an input set a step
        for k in range(3):
            with turns.step():
                log.append(f"step {k}")
                if k == 0:
                    in_step.set()
                    go_on.wait(10)

    def timing() -> None:  # the screen's
        with turns.timing():
            log.append("timing")
            time.sleep(0.2)
            log.append("timed")

    threads = [threading.Thread(target=background)]
    threads[0].start()
    assert in_step.wait(10)
    threads.append(threading.Thread(target=timing))
    threads[1].start()
    deadline = time.monotonic() + 10
    while turns._timings == 0 and time.monotonic() < deadline:  # the timing is waiting for step 0
        time.sleep(0.01)
    assert log == ["step 0"]
    go_on.set()
    for thread in threads:
        thread.join(10)
    assert log == ["step 0", "timing", "timed", "step 1", "step 2"]


def test_the_neighbourhood_respects_the_hardware_and_the_bottleneck():
    source = (ROOT / "benchmarks" / "race" / "matmul_small_tiles.py").read_text()
    launch = launches(source)[0]
    config = space.current(launch)
    assert all(space.feasible(launch, c) for c in space.neighbours(launch, config, "memory_bound"))
    big = {**config, **{n: 256 for n in config if side(n)}, "num_warps": 1}
    assert launch.dots and not space.feasible(launch, big)  # a 256x256 fp32 accumulator in one warp spills
    assert space.feasible(launch, {**big, "BLOCK_K": 64, "num_warps": 8, "num_stages": 1})
    first = space.neighbours(launch, config, "memory_bound")[0]  # bigger tiles first for a memory-bound kernel
    assert any(first[n] > config[n] for n in config if side(n))


def test_explore_moves_to_faster_places_and_proposes_only_what_beat_the_start():
    times = {1024: 10.0, 2048: 6.0, 4096: 4.0, 8192: 5.0}  # a made-up landscape over BLOCK, warps irrelevant

    def measure(sources):
        got = []
        for s in sources:
            block = launches(s)[0].params["BLOCK"]
            warps = launches(s)[0].params["num_warps"]
            got.append(times.get(block, 20.0) + (0.5 if warps != 4 else 0.0))
        return Measured(tuple(got))

    rewriter = search.SearchRewriter()
    context = RewriteContext(ADD, [{"kind": "memory_bound", "kernel": "add_kernel"}])
    explored = rewriter.explore(context, measure, n=2, budget_s=60, most=40)
    found = explored.candidates
    assert [c.meta["config"]["BLOCK"] for c in found] == [4096, 4096]
    assert found[0].meta["config"]["num_warps"] == 4 and found[0].meta["screen_ms"] == 4.0
    assert 0 < explored.screened <= 40


def test_variants_that_do_not_run_in_the_screen_are_counted_and_the_stop_says_why():
    """FlagGems' grouped matmul on the H200: every variant failed in the screen, and the stop said only "none untried
    was faster". Now it says how many had no time, and the first one's reason."""
    from kernel_lab.loop.steps import Stop, _unrun

    def measure(sources):
        wrong = "wrong: output 0: has 12 NaN values where the reference has numbers"
        return Measured(tuple(4.0 if s == ADD else None for s in sources), tuple("" if s == ADD else wrong for s in sources))

    explored = search.SearchRewriter().explore(
        RewriteContext(ADD, [{"kind": "memory_bound"}]), measure, n=2, budget_s=60, most=12
    )
    assert explored.candidates == () and explored.unrun and all("12 NaN values" in why for why in explored.unrun)
    said = Stop("screened", {"rewriter": "search", "count": "12", "version": "v000", "unrun": _unrun(explored)}).text()
    assert (
        f"; {len(explored.unrun)} of the {explored.screened} measured did not run or were wrong there (the first: wrong:" in said
    )


def test_a_start_as_fast_as_a_screened_local_optimum_is_not_looked_around_again():
    times = {1024: 10.0, 2048: 4.05, 4096: 4.0, 8192: 5.0}  # 2048 within the screen's noise of the optimum, 4096
    asked: list[str] = []

    def config(source: str) -> dict[str, int]:
        return space.current(launches(source)[0])

    def measure(sources):
        asked.extend(sources)
        return Measured(
            tuple(times.get(config(s)["BLOCK"], 20.0) + (0.5 if config(s)["num_warps"] != 4 else 0.0) for s in sources)
        )

    rewriter = search.SearchRewriter()
    found = rewriter.explore(RewriteContext(ADD, [{"kind": "memory_bound"}]), measure, n=4, budget_s=60, most=60).candidates
    assert rewriter.optimum is not None and rewriter.optimum[1] == 4.0 and rewriter.optimum[2]["BLOCK"] == 4096
    near = next(c.source for c in found if config(c.source) == {"BLOCK": 2048, "num_warps": 4})
    first = len(asked)
    settled = rewriter.explore(RewriteContext(near, [{"kind": "memory_bound"}]), measure, n=4, budget_s=60, most=60)
    assert settled.candidates == () and len(asked) == first and settled.screened == settled.recalled == 0
    assert "within 2% of the fastest launch configuration screened (BLOCK 4096, num_warps 4: 4.000 ms" in settled.settled
    off = next(c.source for c in found if config(c.source) == {"BLOCK": 4096, "num_warps": 8})  # 12% behind
    again = rewriter.explore(RewriteContext(off, [{"kind": "memory_bound"}]), measure, n=4, budget_s=60, most=60)
    assert again.settled == "" and asked[first] == off  # looked around: its start measured again
    before, best = len(asked), rewriter.optimum[0]
    again = rewriter.explore(RewriteContext(best, [{"kind": "memory_bound"}]), measure, n=4, budget_s=60, most=60)
    assert again.settled == "" and asked[before] == best  # the optimum itself: as before, its start measured again


def test_explore_ends_at_a_local_optimum_whose_whole_neighbourhood_was_measured_on_any_landscape():
    rng = random.Random(7)
    for _ in range(20):  # made-up landscapes over BLOCK and num_warps, each with a minimum somewhere
        ms = {(b, w): rng.uniform(1.0, 10.0) for b in space._powers(16, 16384) for w in space.WARPS}

        def measure(sources, ms=ms):
            return Measured(tuple(ms[(c["BLOCK"], c["num_warps"])] for c in (space.current(launches(s)[0]) for s in sources)))

        rewriter = search.SearchRewriter()
        rewriter.explore(RewriteContext(ADD, [{"kind": "memory_bound"}]), measure, n=4, budget_s=60, most=200)
        assert rewriter.optimum is not None
        _, best, config = rewriter.optimum
        launch = launches(ADD)[0]  # the explore's variants are the start's source with the changes applied
        around = [apply(ADD, launch, space.delta(launch, c)) for c in space.neighbours(launch, config, "memory_bound")]
        assert all(rewriter.measured[t] is not None and rewriter.measured[t] >= 0.99 * best for t in around)


def test_a_matmul_far_from_good_tiles_tries_the_usual_fast_shapes_in_its_first_batch():
    source = (ROOT / "benchmarks" / "race" / "matmul_small_tiles.py").read_text()  # 32x32x32 tiles, 2 warps, 1 stage
    batches: list[list[dict]] = []

    def measure(sources):  # a made-up landscape: big M and N tiles win, 128x256 the best
        configs = [space.current(launches(s)[0]) for s in sources]
        batches.append(configs)
        return Measured(tuple(1.0 / (c["BLOCK_M"] * c["BLOCK_N"]) + abs(c["BLOCK_N"] - 256) * 1e-6 for c in configs))

    rewriter = search.SearchRewriter()
    found = rewriter.explore(RewriteContext(source, [{"kind": "memory_bound"}]), measure, n=1, budget_s=60, most=30).candidates
    assert any((c["BLOCK_M"], c["BLOCK_N"]) == (128, 256) for c in batches[0])
    assert (found[0].meta["config"]["BLOCK_M"], found[0].meta["config"]["BLOCK_N"]) in ((128, 256), (256, 256))


def test_a_later_round_measures_only_what_no_earlier_one_did_and_a_slow_reading_of_its_start_proposes_nothing():
    times = {1024: 10.0, 2048: 6.0, 4096: 4.0, 8192: 5.0}
    asked: list[str] = []

    def measure(sources):
        asked.extend(sources)
        return Measured(tuple(times.get(launches(s)[0].params["BLOCK"], 20.0) for s in sources))

    rewriter = search.SearchRewriter()
    explored = rewriter.explore(RewriteContext(ADD, [{"kind": "memory_bound"}]), measure, n=1, budget_s=60, most=40)
    first = len(asked)
    assert first == explored.screened > 0 and explored.recalled == 0
    best = explored.candidates[0].source
    slow = {4096: 9.0}  # the winner read slow once (a cold GPU): its neighbours must not all look faster now
    times.update(slow)
    again = rewriter.explore(RewriteContext(best, [{"kind": "memory_bound"}]), measure, n=4, budget_s=60, most=40)
    assert again.candidates == () and again.recalled > 0
    assert asked[first] == best and best not in asked[first + 1 :]  # the start is measured again, the rest only if new
    assert len(set(asked[first:])) == len(asked[first:]) == again.screened
    assert not set(asked[first + 1 :]) & set(asked[:first])


@pytest.mark.slow
def test_optimize_screens_then_judges_only_the_fastest(tmp_path):
    events = []
    result = kernel_lab.optimize(
        CELLS / "add_ref.py",
        rounds=1,
        candidates=2,
        screen=12,
        root=tmp_path,
        replay=samples.report("memory_bound"),
        on_event=events.append,
    )
    messages = [e.message for e in events]
    # at most 12; here BLOCK's whole range (9): on the interpreter num_warps and num_stages are left as written
    screened = [int(m.split("screened ")[1].split()[0]) for m in messages if "launch configurations in" in m]
    assert screened and 2 <= screened[0] <= 12, messages
    versions = result.session.versions[1:]
    assert 1 <= len(versions) <= 2 and all("in the screen" in v.explanation for v in versions)
    assert all(v.correct for v in versions)  # the finalists still went through the judge


@pytest.mark.slow
def test_processes_started_ahead_serve_the_next_screen_and_judge_once_and_spare_ones_come_back():
    workers.clear()
    workers.ahead({(workers.SCREEN, "screen"): 1, (workers.SANDBOX, "reference"): 1, (workers.SANDBOX, "candidate"): 1}, "cpu")
    assert workers.ready() == 3
    pids = {w.who: w.proc.pid for group in workers._ready.values() for w in group}
    # the judge's processes load the profiler while they wait, as nobody waits for them yet
    assert [("--warm" in w.proc.args) for group in workers._ready.values() for w in group] == [False, True, True]
    dead = workers.start(workers.SCREEN, "screen", "cpu", 1.0)  # one that died meanwhile is never handed out
    dead.close()
    dead.wait()
    workers.keep([dead])
    with (
        Screener(ADD, device="cpu", workers=1) as screen,
        Judge(ADD, Options(timeout=120.0), "cpu", time=False, keep_spares=True) as judge,
    ):
        original, _ = screen.screen([])
        assert original.ms and screen._workers[0].proc.pid == pids["screen"]
        reference = judge.reference
        assert judge.check(ADD).correct and reference.worker is not None and reference.worker.proc.pid == pids["reference"]
        assert workers.ready() == 0  # each taken once (the candidate's too)
        screen.keep_share = 0.0
        screen.rest()  # a fresh, unloaded worker for the next round: unused, it goes back when the screen closes
        spare = screen._booted[0].proc.pid
        spare_candidate = judge._spare[0].proc.pid  # the next round's, started during this one: never given a cell
    assert workers.ready() == 2
    assert workers._ready[(workers.SCREEN, "screen", "cpu")][0].proc.pid == spare
    assert workers._ready[(workers.SANDBOX, "candidate", "cpu")][0].proc.pid == spare_candidate
    workers.clear()
    used = workers.start(workers.SANDBOX, "candidate", "cpu", 1.0)
    workers.ended([used])  # gone with its folder (its cell, its log)
    assert not used.folder.exists()
    off = Settings(optimize_ahead=False)  # then a screen's and a judge's spare processes end with them
    with Screener(ADD, off, device="cpu", workers=1) as screen, Judge(ADD, Options(), "cpu", time=False) as judge:
        screen.start()
        judge.start()
    assert workers.ready() == 0


def test_a_worker_started_ahead_makes_tritons_per_process_hash_while_it_waits():
    from triton.runtime.cache import triton_key

    triton_key.cache_clear()
    warm_triton()  # on a GPU machine, before the worker reads its first request
    assert triton_key.cache_info().currsize == 1
