"""Time the judge's rounds on a teaching cell, as %%optimize drives it (run on the GPU machine).

    python benchmarks/judge_round.py add_tiny_block|scale_warp_blocks [--wait S]

The judge is started ahead (as %%optimize does while it profiles the original), ``--wait`` seconds pass
(default 12: a profile's time), then two rounds of four candidates are judged. Candidates change the launch
(Triton block sizes, or the CUDA cell's threads per block, so each is a new load_inline build). Prints each
round's wall time and where it went: the reference's preparation, waiting for answers per request, timing.
Run it from a folder outside the repository with PYTHONPATH naming the checkout to measure.
"""

from __future__ import annotations

import argparse
import collections
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import kernel_lab
from kernel_lab.verify import Judge, Options
from kernel_lab.verify import judge as J
from kernel_lab.verify import workers as W

HERE = Path(__file__).resolve().parent / "teaching"
OLD = "64),)](x, y, out, x.numel(), BLOCK=64, num_warps=4)"
ROUNDS = {
    "add_tiny_block": [
        [(OLD, OLD.replace("64", str(b))) for b in (256, 512, 1024, 2048)],
        [(OLD, OLD.replace("64", "1024").replace("warps=4", f"warps={w}")) for w in (1, 2, 8, 16)],
    ],
    "scale_warp_blocks": [
        [("#define THREADS 32", f"#define THREADS {t}") for t in (64, 128, 256, 512)],
        [("#define THREADS 32", f"#define THREADS {t}") for t in (96, 192, 384, 1024)],
    ],
}
SPENT: dict[str, list[float]] = collections.defaultdict(list)
SPANS: list[tuple[str, float, float]] = []  # (step, start, end) of every timed step, perf_counter seconds


def timed(name: str, fn: Callable[..., Any], key: Callable[..., str] = lambda *a, **k: "") -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            end = time.perf_counter()
            SPENT[name + key(*args, **kwargs)].append(end - start)
            SPANS.append((name + key(*args, **kwargs), start, end))

    return wrapper


def heard(phase: J.Phase) -> None:
    """A phase of any judge, into SPENT and SPANS."""
    SPENT[f"judge: {phase.name}"].append(phase.seconds)
    SPANS.append((f"judge: {phase.name}", phase.ended - phase.seconds, phase.ended))


def instrument() -> None:
    """Time the judge's steps into SPENT (its phases, heard through kernel_lab.verify.judge.watch) and each answer
    from a process (Worker.more wrapped here; nothing in it changes)."""
    print("kernel_lab from", Path(kernel_lab.__file__).parent, flush=True)
    J.watch(heard).__enter__()  # for the whole run
    W.Worker.more = timed("answer from the ", W.Worker.more, lambda self, *a, **k: self.who)


def print_spent(indent: str) -> None:
    """Where the time in SPENT went, the largest first."""
    for k in sorted(SPENT, key=lambda k: -sum(SPENT[k])):
        print(f"{indent}{sum(SPENT[k]):6.2f} s  x{len(SPENT[k]):3d}  {k}", flush=True)


def print_timeline(indent: str, start: float, until: float) -> None:
    """When each step ran between ``start`` and ``until`` (perf_counter seconds): its first start and last end
    from ``start``, how many times, their sum and the time at least one ran (steps in parallel overlap)."""
    steps: dict[str, list[tuple[float, float]]] = collections.defaultdict(list)
    for name, a, b in SPANS:
        if start <= a <= until:
            steps[name].append((a - start, b - start))
    print(f"{indent}{'first':>7} {'last':>7} {'n':>4} {'sum':>7} {'busy':>7}  step (seconds from the call)")
    for name, spans in sorted(steps.items(), key=lambda item: min(a for a, _ in item[1])):
        busy, reach = 0.0, -1.0
        for a, b in sorted(spans):
            busy += max(0.0, b - max(a, reach))
            reach = max(reach, b)
        first, last = min(a for a, _ in spans), max(b for _, b in spans)
        total = sum(b - a for a, b in spans)
        print(f"{indent}{first:7.2f} {last:7.2f} {len(spans):4d} {total:7.2f} {busy:7.2f}  {name}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("cell", choices=sorted(ROUNDS))
    parser.add_argument("--wait", type=float, default=12.0)
    args = parser.parse_args()
    instrument()
    source = (HERE / f"{args.cell}.py").read_text()
    start = time.perf_counter()
    with Judge(source, Options(timeout=600)) as judge:
        judge.start()
        time.sleep(args.wait)
        for n, edits in enumerate(ROUNDS[args.cell], 1):
            candidates = []
            for old, new in edits:
                assert old in source, old
                candidates.append(source.replace(old, new))
            SPENT.clear()
            t = time.perf_counter()
            verdicts = judge.check_many(candidates)
            print(f"round {n}: {time.perf_counter() - t:6.1f} s for {len(candidates)} candidates", flush=True)
            for v in verdicts:
                print(f"    {v.correct} {v.reason[:100]} {v.timing.speedup if v.timing else '-'}")
            print_spent("    ")
    print(f"all: {time.perf_counter() - start:.1f} s (with {args.wait:g} s of waiting first)")


if __name__ == "__main__":
    main()
