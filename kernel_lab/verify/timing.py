"""How the judge times a round's right candidates against the reference: every declared shape, the largest first,
the reference and each candidate in turn (a new order every round of batches), one series of the reference's
times serving every candidate, as many candidates side by side as the GPU's memory holds.

Each batch is one request to one side's process (:meth:`kernel_lab.verify.sandbox.Sandbox.time`: calls queued behind a
cache flush and a spin, on inputs varied in secret, each output fingerprinted); the judge's own clock bounds every
batch; the fingerprints of a candidate's calls are compared with the reference's at the places in the batch the
reference made its calls (drawn afresh each round, sent to no candidate).
"""

from __future__ import annotations

import os
import secrets
import statistics
import time
from dataclasses import dataclass, field
from typing import Any

from kernel_lab.verify import checks
from kernel_lab.verify.reference import Reference
from kernel_lab.verify.trial import Rejected, Trial
from kernel_lab.verify.verdict import Timing
from kernel_lab.verify.workers import Stopped, ended

TIME_BUDGET_S = 1.0  # timing of all shapes together, reference and candidate
CALLS_PER_BATCH = 5
MIN_SAMPLES, MAX_SAMPLES = 10, 200  # timed calls per side on the headline shape (half on the others), at least; at most
# per candidate (a slow reference makes fewer: reference_calls)
REF = -1  # the reference, among the candidates by index

Outcome = tuple[Timing, ...] | Stopped | Rejected


def reference_calls(reference: list[float], candidates: list[list[float]]) -> int:
    """The reference's timed calls in the next round: a whole batch (CALLS_PER_BATCH, as each candidate) unless its
    calls take several times the fastest candidate's; then about as much time as that candidate's batch, one call at
    least. A slow reference's times spread little, where a short kernel's spread with its launch (13-21% of the
    median against 1.4-1.8% on the H100: benchmarks/race_h100_sampled_prints/): its calls are the ones that count.
    Which of the batch's calls the reference makes is drawn afresh each round, and no candidate knows it, so every
    call of a candidate's may be the one compared."""
    fastest = min((statistics.median(c) for c in candidates if c), default=0.0)
    if not reference or fastest <= 0:
        return CALLS_PER_BATCH
    return max(1, min(CALLS_PER_BATCH, round(CALLS_PER_BATCH * fastest / statistics.median(reference))))


def at_once(reference: Reference, n: int) -> int:
    """How many of ``n`` candidates to time side by side: on a GPU, as many as its free memory holds (each keeps
    copies of the largest timing set, its outputs and a cache flush); on the CPU, all."""
    if reference.scratch.type != "cuda" or n <= 1:
        return max(n, 1)
    import torch

    largest = max((reference.expected[s.id].input_bytes for sets in reference.timing.values() for s in sets), default=0)
    free, _ = torch.cuda.mem_get_info(reference.scratch)
    return max(1, min(n, free // (6 * largest + (1 << 30))))


def time_round(reference: Reference, trials: list[Trial]) -> list[Outcome]:
    """Each trial's timings (or why it failed while timed), side by side in batches that the GPU's memory holds: a
    batch's processes end before the next one is timed."""
    most = at_once(reference, len(trials))
    timed: list[Outcome] = []
    for k in range(0, len(trials), most):
        batch = trials[k : k + most]
        timed += _time_together(reference, batch)
        if most < len(trials):
            ended(trial.candidate for trial in batch)
    return timed


@dataclass
class _Shape:
    """One declared shape's timing in progress: each side's samples (event times) and walls (until idle)."""

    shape: tuple
    ids: list[int]  # the input sets the timed calls rotate through
    want: int  # samples each side needs at least
    samples: dict[int, list[float]] = field(default_factory=dict)
    walls: dict[int, list[float]] = field(default_factory=dict)


def _time_together(reference: Reference, trials: list[Trial]) -> list[Outcome]:
    groups = sorted(reference.timing.items(), key=lambda item: -max(reference.expected[s.id].input_bytes for s in item[1]))
    # as long as each candidate timed alone with the reference (half the budget each side), shared
    budget = TIME_BUDGET_S * (len(trials) + 1) / 2 / max(len(groups), 1)
    failed: dict[int, Stopped | Rejected] = {}
    shapes: dict[int, list[Timing]] = {i: [] for i in range(len(trials))}
    keep = [s.id for _, sets in groups for s in sets]  # all a candidate still needs: it lets go of the rest
    on_gpu = reference.device_name != "cpu"
    for rank, (shape, sets) in enumerate(groups):
        live = [i for i in range(len(trials)) if i not in failed]
        if not live:
            break
        timing = _Shape(shape, [s.id for s in sets], MIN_SAMPLES if rank == 0 else MIN_SAMPLES // 2)
        _time_shape(reference, trials, live, timing, budget, failed, keep)
        for i in [i for i in live if i not in failed]:
            shapes[i].append(Timing.from_samples(timing.samples[REF], timing.samples[i], shape))
            hidden = (
                checks.hidden_work(timing.samples[i], timing.walls[i], timing.samples[REF], timing.walls[REF]) if on_gpu else None
            )
            if hidden and hidden not in trials[i].warnings:
                trials[i].warnings.append(hidden)
    out: list[Outcome] = []
    headline = groups[0][1] if groups else []
    moved = _moved_bytes(reference, headline[0].id) if headline else 0
    for i, trial in enumerate(trials):
        if i in failed:
            out.append(failed[i])
            continue
        trial.timings_done(shapes[i][0] if shapes[i] else None, moved)
        out.append(tuple(shapes[i]))
    return out


def _moved_bytes(reference: Reference, set_id: int) -> int:
    """The bytes a call on the headline shape must move: its inputs read once, its outputs written once."""
    e = reference.expected[set_id]
    return e.input_bytes + sum(t.numel() * t.element_size() for t in e.outputs)


def _time_shape(
    reference: Reference,
    trials: list[Trial],
    live: list[int],
    timing: _Shape,
    budget: float,
    failed: dict[int, Stopped | Rejected],
    keep: list[int],
) -> None:
    """Rounds of batches on one shape until every side has its samples and the candidates their most calls, or the
    budget is spent; a side that fails leaves the rounds (the reference failing ends them for all)."""
    timing.samples = {i: [] for i in [REF, *live]}
    timing.walls = {i: [] for i in [REF, *live]}
    started, round_, ref_calls = time.monotonic(), 0, CALLS_PER_BATCH
    while live:
        prints = _one_round(reference, trials, live, timing, round_, ref_calls, failed, keep)
        for i in [i for i in live if i in prints and REF in prints]:
            try:
                trials[i].fingerprints(prints[i], prints[REF], timing.shape, prints["first"])
            except Rejected as wrong:
                failed[i] = wrong
        live[:] = [i for i in live if i not in failed]
        round_ += 1
        ref_calls = reference_calls(timing.samples[REF], [timing.samples[i] for i in live])
        n = min((len(timing.samples[i]) for i in live), default=0)
        if min(n, len(timing.samples[REF])) >= timing.want and (n >= MAX_SAMPLES or time.monotonic() - started > budget):
            break


def _one_round(
    reference: Reference,
    trials: list[Trial],
    live: list[int],
    timing: _Shape,
    round_: int,
    ref_calls: int,
    failed: dict[int, Stopped | Rejected],
    keep: list[int],
) -> dict[Any, Any]:
    """One batch from each side, in this round's order: their fingerprints (and ``"first"``: the place in the batch
    of the reference's first call)."""
    assert reference.worker is not None
    request = {"cmd": "time", "set_ids": timing.ids, "calls": CALLS_PER_BATCH, "secret": int.from_bytes(os.urandom(4), "little")}
    first = secrets.randbelow(CALLS_PER_BATCH - ref_calls + 1)  # never sent to a candidate
    order = [REF, *live]
    order = order[round_ % len(order) :] + order[: round_ % len(order)]
    prints: dict[Any, Any] = {"first": first}
    where = f"while being timed on shape {timing.shape}"
    for who in order:
        t0 = time.perf_counter()
        try:
            if who == REF:
                asked = {**request, "calls": ref_calls, "first": first}
                reply, (prints[who],) = reference.worker.answer(asked, trials[0].deadline, where)
            else:
                reply, (prints[who],) = trials[who].ask({**request, "keep": keep}, timing.ids, where)
        except Stopped as stop:
            failed |= dict.fromkeys(live if who == REF else [who], stop)
            if who == REF:
                break
            continue
        timing.samples[who] += reply["events_ms"]
        timing.walls[who] += reply["walls_ms"]
        if who != REF:
            trials[who].timed(reply, (time.perf_counter() - t0) * 1e3)
    return prints
