"""Where a candidate's correctness checks go, step by step (run on the GPU machine).

    python benchmarks/judge_check_steps.py [--sets N]

Two views of the race's GELU cell (64M fp32 elements, ``benchmarks/race/gelu_block16.py``):

1. **In one process**, the steps the candidate's process takes per input set (``sandbox.Box.check``: two calls,
   each on fresh copies of the inputs and poisoned memory) and the judge's comparisons of one call's output
   (``compare`` and ``against_truth``), each timed alone with the GPU synchronized around it.
2. **A judge round** of four candidates that change only the launch (as the optimizer's finalists), the
   judge's steps wrapped with timers: the candidate's answer per input set, copying its outputs out,
   the comparisons, handing the inputs over.

Run it from a folder outside the repository with PYTHONPATH naming the checkout to measure.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import judge_round
import torch

from kernel_lab.verify import Judge, Options, compare, fingerprint, handover, sandbox, timed, variation, verdict, workers

CELL = Path(__file__).resolve().parent / "race" / "gelu_block16.py"
LAUNCH = "gelu_kernel[(triton.cdiv(x.numel(), 16),)](x, out, x.numel(), BLOCK=16)"


def step(times: dict[str, list[float]], name: str, fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)`` with the GPU idle before and after it, its wall time added to ``times[name]``."""
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    out = fn(*args)
    torch.cuda.synchronize()
    times.setdefault(name, []).append(time.perf_counter() - t0)
    return out


def in_one_process(sets: int) -> None:
    """The candidate's steps per input set and the judge's comparisons, in this process."""
    ns: dict[str, Any] = {"__name__": "cell"}
    exec(compile(CELL.read_text(), str(CELL), "exec"), ns)  # noqa: S102 - our own benchmark cell
    x = ns["make_inputs"]()[0]
    want = ns["run"](x)
    truth = ns["torch_run"](x.double())
    sizes: set[int] = {x.nbytes}
    flush = torch.empty(timed.FLUSH_BYTES["cuda"], dtype=torch.uint8, device=x.device)
    generator, prints = torch.Generator().manual_seed(7), fingerprint.Prints(7)
    times: dict[str, list[float]] = {}
    for _ in range(sets):
        for _call in range(2):
            copy = step(times, "clone the inputs", sandbox.clone, (x,))
            step(times, "poison (empty_cache, fill)", sandbox.poison, x.device, sizes)
            got = step(times, "run", ns["run"], *copy)
            step(times, "meta", sandbox.meta, got, copy)
            step(times, "changed (inputs against the set)", sandbox.changed, copy, (x,))
            step(times, "compare (judge)", compare.compare, got, want, 1e-4, 1e-5)
            step(times, "against_truth (judge)", compare.against_truth, got, want, truth)
            step(times, "clone an output (judge's copy out of the box)", got.clone)
            # the steps of a timed call other than the call itself (the judge's: variation, fingerprint; the side's: flush)
            step(times, "timed call: inputs varied (judge)", variation.varied, (x,), generator)
            step(times, "timed call: L2 flushed", flush.zero_)
            step(times, "timed call: its output's fingerprint (judge)", prints.of, [got])
    print("in one process, per step (median of", 2 * sets, "calls):", flush=True)
    for name, ts in times.items():
        print(f"  {statistics.median(ts) * 1e3:8.2f} ms  {name}", flush=True)


def judge_round_of_four(wait: float, dump: str | None) -> None:
    """One round of four launch-only candidates, the judge's steps timed (``dump``: a JSON file for the timed calls'
    samples, per candidate and shape, in the order they were taken)."""
    judge_round.instrument()
    timed, spent = judge_round.timed, judge_round.SPENT
    compare.compare = timed("judge: compare", compare.compare)
    compare.against_truth = timed("judge: against_truth", compare.against_truth)
    handover.pack = timed("judge: inputs handed over (copy, share)", handover.pack)
    asks: dict[str, list[tuple[float, float]]] = {}  # who -> (the judge's wall, the process's own batch) per timed batch
    answer = workers.Worker.answer

    def answer_timed(self: workers.Worker, request: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        t0 = time.perf_counter()
        reply = answer(self, request, *args, **kwargs)
        if request.get("cmd") == "time":
            asks.setdefault(self.who, []).append(((time.perf_counter() - t0) * 1e3, reply[0]["batch_ms"]))
        return reply

    workers.Worker.answer = answer_timed  # type: ignore[method-assign]
    samples: list[dict[str, Any]] = []
    from_samples = verdict.Timing.from_samples

    def kept(reference: list[float], candidate: list[float], shape: tuple = ()) -> verdict.Timing:
        samples.append({"shape": list(shape), "reference_ms": list(reference), "candidate_ms": list(candidate)})
        return from_samples(reference, candidate, shape)

    verdict.Timing.from_samples = kept  # type: ignore[method-assign,assignment]
    source = CELL.read_text()
    assert LAUNCH in source
    changes = [(1024, 4), (2048, 8), (4096, 8), (8192, 8)]
    candidates = [
        source.replace(LAUNCH, f"gelu_kernel[(triton.cdiv(x.numel(), {b}),)](x, out, x.numel(), BLOCK={b}, num_warps={w})")
        for b, w in changes
    ]
    with Judge(source, Options(timeout=600)) as judge:
        judge.start()
        time.sleep(wait)
        spent.clear()
        t = time.perf_counter()
        verdicts = judge.check_many(candidates)
        print(f"round: {time.perf_counter() - t:.2f} s for {len(candidates)} candidates", flush=True)
        for v in verdicts:
            print("   ", v.summary()[:150], flush=True)
        judge_round.print_spent("    ")
    for who, pairs in asks.items():
        walls, inside = zip(*pairs)
        print(
            f"    timed batches of the {who}: {len(pairs)}, median {statistics.median(walls):.1f} ms from request to "
            f"answer, {statistics.median(inside):.1f} ms of it in its process; in all {sum(walls) / 1e3:.2f} s from "
            f"request to answer, {sum(inside) / 1e3:.2f} s in its process",
            flush=True,
        )
    if dump:
        Path(dump).write_text(json.dumps(samples))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sets", type=int, default=8)
    parser.add_argument("--wait", type=float, default=10.0)
    parser.add_argument("--dump", default=None, help="write the timed calls' samples here (JSON)")
    args = parser.parse_args()
    in_one_process(args.sets)
    torch.cuda.empty_cache()
    judge_round_of_four(args.wait, args.dump)


if __name__ == "__main__":
    main()
