"""Where a round of ``%%optimize`` spends its time on a Triton cell: the screen, the judge's steps, one by one.

    python benchmarks/judge_phases.py [CELL] [--rounds 2] [--device cuda] [--whole]

Runs what one round does after the profile, twice, with each step timed from outside (the judge's and the
screen's methods are wrapped here, nothing in them changes): the screen (workers loading the original,
compiling and checking each variant, timing), then the judge on the four fastest variants (the reference's
input sets, each candidate's load, each input set it is checked on, the record of its kernels, its timing).
Prints one line per step with its start and duration (seconds since the round began) and a total per kind.
``--whole``: instead, ``kernel_lab.optimize`` itself after a profile of the cell (as ``%%optimize`` after
``%%profile``), ``--rounds`` rounds of four, every step timed from the call (the profiles and the waits too);
``--pause S``: S seconds between the profile and the call; ``--ahead``: the processes the call takes are started
after the profile, as the notebook does; ``--cuda-first``: CUDA is started in this process before the call (as in a
notebook that ran its kernels). The parent's stalls (no thread ran Python for 0.2 s or more) are logged, and a
screen worker's own steps while it loads the original.
``--sets``: instead, what the reference's process does for each of the judge's input sets, in this process
(its sandbox, the same plan): make the inputs, the call on poisoned memory, the higher-precision "truth".
"""

from __future__ import annotations

import argparse
import functools
import re
import signal
import sys
import threading
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from kernel_lab.verify import judge as judge_module
from kernel_lab.verify import screen as screen_module
from kernel_lab.verify import workers

ROOT = Path(__file__).resolve().parent
LOG: list[tuple[str, float, float]] = []  # (step, start, seconds)
T0 = [time.monotonic()]
LOCK = threading.Lock()


def timed(owner: Any, name: str, label: Any) -> None:
    """Wrap ``owner.name`` so each call is logged under ``label(self, *args)``."""
    original = getattr(owner, name)

    @functools.wraps(original)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        began = time.monotonic()
        try:
            return original(self, *args, **kwargs)
        finally:
            with LOCK:
                LOG.append((label(self, *args), began - T0[0], time.monotonic() - began))

    setattr(owner, name, wrapper)


def instrument() -> None:
    def who(trial: Any) -> str:
        return trial.path.parent.name

    def heard(phase: judge_module.Phase) -> None:  # every judge's phases (kernel_lab.verify.judge.watch)
        with LOCK:
            LOG.append((f"judge: {phase.who} {phase.name}", phase.ended - phase.seconds - T0[0], phase.seconds))

    judge_module.watch(heard).__enter__()  # for the whole run
    timed(screen_module.Screener, "_start", lambda s, *a: "screen: workers load the original")
    timed(screen_module.Screener, "screen", lambda s, v: f"screen: {len(v)} variants in all")
    timed(screen_module.Screener, "_time", lambda s, w, i, *more: f"screen:   timing of variant {i}")
    timed(screen_module.Screener, "_load", lambda s, w: "screen:   a worker loads the original (after its boot)")
    timed(judge_module.Judge, "wait_prepared", lambda j: "screen: waits for the reference's results (the GPU quiet)")

    def heartbeat() -> None:  # the parent's threads stalled (the GIL held, e.g. by CUDA's start in this process)
        last = time.monotonic()
        while True:
            time.sleep(0.01)
            now = time.monotonic()
            if now - last > 0.2:
                with LOCK:
                    LOG.append(("parent: no thread ran Python for this long", last - T0[0], now - last))
            last = now

    threading.Thread(target=heartbeat, daemon=True).start()
    original_ask = workers.Worker.ask

    def ask(self: Any, request: dict[str, Any], deadline: float, where: str) -> Any:
        began = time.monotonic()
        try:
            return original_ask(self, request, deadline, where)
        finally:
            if request.get("cmd") == "prepare":
                with LOCK:
                    LOG.append((f"screen:   compile + check of variant {request['id']}", began - T0[0], time.monotonic() - began))

    def answer(self: Any, request: dict[str, Any], deadline: float, where: str, **options: Any) -> Any:
        began = time.monotonic()
        reply = original_answer(self, request, deadline, where, **options)
        if request.get("cmd") == "load" and "took" in reply[0]:  # a screen worker's own steps while loading
            steps = ", ".join(f"{k} {v:.2f} s" for k, v in reply[0]["took"].items())
            with LOCK:
                LOG.append((f"screen:     in the worker: {steps}", began - T0[0], time.monotonic() - began))
        return reply

    original_answer = workers.Worker.answer
    workers.Worker.answer = answer  # type: ignore[method-assign]

    workers.Worker.ask = ask  # type: ignore[method-assign]


def variants(source: str) -> list[str]:
    """Launch-parameter variants of a cell whose kernel has a BLOCK constexpr and num_warps."""
    out = []
    for block in (128, 256, 512, 1024, 2048, 4096, 8192):
        for warps in (1, 2, 4, 8, 16):
            changed = re.sub(r"BLOCK=\d+", f"BLOCK={block}", source)
            changed = re.sub(r"cdiv\((.*?), \d+\)", rf"cdiv(\1, {block})", changed)
            changed = re.sub(r"num_warps=\d+", f"num_warps={warps}", changed)
            if changed != source:
                out.append(changed)
    return out


def report(title: str) -> None:
    """The steps logged since T0, in order, then the total time of each kind of step."""
    print(title)
    sums: dict[str, float] = defaultdict(float)
    for step, began, seconds in sorted(LOG, key=lambda row: row[1]):
        print(f"  {began:6.2f} s  +{seconds:5.2f} s  {step}")
        sums[re.sub(r"candidate_\d+|variant -?\d+|\d+ variants", "#", step).strip()] += seconds
    for step, seconds in sorted(sums.items(), key=lambda kv: -kv[1]):
        print(f"  total {seconds:6.2f} s  {step}")


def whole(cell: Path, rounds: int, ahead: bool, pause: float, cuda_first: bool = False) -> None:
    """``kernel_lab.optimize`` after a profile of ``cell`` and ``pause`` seconds (a user reading the hints): its events
    and every step, timed from the call. ``ahead``: the processes it takes are started after the profile, as the
    notebook does (``kernel_lab.api.start_ahead``)."""
    import kernel_lab
    from kernel_lab import api
    from kernel_lab.profiling import base

    timed(base.Fallback, "collect", lambda f, *a: "profile: ncu (a version of the cell)")
    first = kernel_lab.profile(cell).profile
    if ahead:
        api.start_ahead()
    if cuda_first:  # torch and CUDA started in this process before the call, as a notebook that ran its kernels has them
        import torch

        torch.cuda.init()
    time.sleep(pause)
    LOG.clear()
    T0[0] = time.monotonic()

    def event(e: Any) -> None:
        with LOCK:
            LOG.append((f"event: {e.message}", time.monotonic() - T0[0], 0.0))

    started = workers.ready()
    result = kernel_lab.optimize(cell, rounds=rounds, candidates=4, profile=first, on_event=event)
    report(
        f"== {cell.stem}: {time.monotonic() - T0[0]:.1f} s, {len(result.session.versions)} versions; stopped: {result.stopped}"
        f" ({started} processes started ahead)"
    )


def sets(cell: Path, device: str) -> None:
    """The reference's work per input set (the judge's plan for ``cell``), each step timed after the GPU is done."""
    import torch

    from kernel_lab.settings import Settings
    from kernel_lab.verify import sandbox
    from kernel_lab.verify.inputs import plan

    box = sandbox.Sandbox(device)
    began = time.monotonic()
    loaded = box.load(str(cell))
    print(f"== {cell.stem}: load {time.monotonic() - began:.2f} s")
    for name in ("_call", "_truth"):
        timed(sandbox.Sandbox, name, lambda b, *a, name=name: name.strip("_"))
    timed(sandbox.Sandbox, "make", lambda b, specs: "in all")
    for spec in plan([tuple(s) for s in loaded["shapes"]], Settings().seeds, loaded["sizes_known"]):
        LOG.clear()
        T0[0] = time.monotonic()
        box.make([spec.to_json()])
        if torch.cuda.is_available():
            torch.cuda.synchronize()
        steps = ", ".join(f"{step} {seconds:.3f}" for step, _, seconds in LOG)
        print(f"  set {spec.id} {spec.describe()}: {time.monotonic() - T0[0]:.3f} s ({steps})")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("cell", nargs="?", default=str(ROOT / "teaching" / "add_tiny_block.py"))
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--device", default=None)
    parser.add_argument("--parallel", type=int, default=0, help="candidates checked at once (default: the judge's)")
    parser.add_argument("--whole", action="store_true", help="kernel_lab.optimize after a profile, every step timed")
    parser.add_argument("--sets", action="store_true", help="the reference's work per input set, in this process")
    parser.add_argument("--screen-workers", type=int, default=0, help="the screen's processes (default: the screen's)")
    parser.add_argument("--ahead", action="store_true", help="--whole: start the processes ahead after the profile")
    parser.add_argument("--pause", type=float, default=0.0, help="--whole: seconds between the profile and the optimize")
    parser.add_argument("--cuda-first", action="store_true", help="--whole: CUDA started in this process before the call")
    args = parser.parse_args()
    if args.screen_workers:
        screen_module.Screener.__init__ = functools.partialmethod(  # type: ignore[method-assign]
            screen_module.Screener.__init__, workers=args.screen_workers
        )
    if args.sets:
        sets(Path(args.cell), args.device or "cuda")
        return
    instrument()
    if args.whole:  # cut short by `timeout`: the steps logged so far, then the exit
        signal.signal(signal.SIGTERM, lambda *_: (report("== cut short (SIGTERM)"), sys.exit(124)))
        whole(Path(args.cell), args.rounds, args.ahead, args.pause, args.cuda_first)
        return
    source = Path(args.cell).read_text()
    pool = variants(source)
    T0[0] = time.monotonic()
    judge = judge_module.Judge(source, device=args.device)
    judge.parallel = args.parallel or judge.parallel
    screener = screen_module.Screener(source, device=args.device)
    judge.start()
    screener.start()
    LOG.append(("start: judge and screen processes started", 0.0, time.monotonic() - T0[0]))
    time.sleep(8)  # as the loop's first profile would take: the processes start meanwhile
    for round_ in range(1, args.rounds + 1):
        T0[0] = time.monotonic()
        LOG.clear()
        batch = pool[(round_ - 1) * 16 : round_ * 16]
        original, screened = screener.screen(batch)
        screener.rest()
        ranked = sorted((s.ms, i) for i, s in enumerate(screened) if s.ms is not None)[:4]
        verdicts = judge.check_many([batch[i] for _, i in ranked])
        total = time.monotonic() - T0[0]
        report(
            f"== round {round_}: {total:.1f} s; original {original.ms} ms in the screen; verdicts: "
            + ", ".join(f"{v.correct} {v.timing.speedup:.2f}x" if v.timing else str(v.correct) for v in verdicts)
        )
    judge.close()
    screener.close()


if __name__ == "__main__":
    main()
