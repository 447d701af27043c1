"""How the judge times a round's right candidates against the reference: every declared shape, the largest first,
the reference and each candidate in turn (a new order every round of batches), one series of the reference's
times serving every candidate, as many candidates side by side as the GPU's memory holds.

Each batch is one request to one side's process (:meth:`kernel_lab.verify.sandbox.Sandbox.time`: calls queued behind a
cache flush and a spin). The judge makes every call's inputs itself, varied afresh per call
(:mod:`kernel_lab.verify.variation`), hands them over (in buffers it lends, on a GPU: :class:`Slots`), and
fingerprints each call's outputs itself (:mod:`kernel_lab.verify.fingerprint`), with a secret that never leaves this
process. Its own clock bounds every batch of every side; the time a side spends outside its calls is compared with
the reference's. The fingerprints of a candidate's calls are compared with the reference's at the places in the batch
the reference made its calls (drawn afresh each round, sent to no candidate).
"""

from __future__ import annotations

import os
import secrets
import statistics
import time
from contextlib import suppress
from dataclasses import dataclass, field
from typing import Any

from kernel_lab.errors import out_of_memory
from kernel_lab.verify import checks, handover
from kernel_lab.verify.fingerprint import Prints
from kernel_lab.verify.reference import Reference, own_memory, spare
from kernel_lab.verify.trial import Rejected, Trial
from kernel_lab.verify.variation import varied
from kernel_lab.verify.verdict import Timing
from kernel_lab.verify.workers import Stopped, Worker, ended

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
    """How many of ``n`` candidates to time side by side: on a GPU, as many as its free memory holds beside the
    reference's side (each side gets a batch's inputs and output buffers from the judge, and keeps its outputs and a
    cache flush); on the CPU, all."""
    if reference.scratch.type != "cuda" or n <= 1:
        return max(n, 1)
    import torch

    largest = max((reference.expected[s.id].input_bytes for sets in reference.timing.values() for s in sets), default=0)
    free, _ = torch.cuda.mem_get_info(reference.scratch)
    side = (2 * CALLS_PER_BATCH + 4) * largest + (1 << 30)
    return max(1, min(n, free // side - 1))


def time_round(reference: Reference, trials: list[Trial], lending: handover.Lending) -> list[Outcome]:
    """Each trial's timings (or why it failed while timed), side by side in batches that the GPU's memory holds: a
    batch's processes end before the next one is timed."""
    most = at_once(reference, len(trials))
    timed: list[Outcome] = []
    for k in range(0, len(trials), most):
        batch = trials[k : k + most]
        timed += _fitted(reference, batch, lending)
        if most < len(trials):
            ended(trial.candidate for trial in batch)
    return timed


def _fitted(reference: Reference, trials: list[Trial], lending: handover.Lending, tries: int = 2) -> list[Outcome]:
    """``trials`` timed together; where this process's own GPU memory runs out, its spare memory given back and the
    batch timed again in halves, down to one candidate, tried once more alone before it gets an out-of-memory finding
    (the judge's memory, nothing the candidate did). On the H200, Unsloth's GEGLU's four candidates (1 GiB of inputs a
    call) ran out together, twice, and none was timed."""
    try:
        return _time_together(reference, trials, lending)
    except Exception as err:
        if not out_of_memory(err):
            raise
        said = own_memory(err, "timing the round")
    _unlend(reference, trials)
    if len(trials) > 1:
        half = len(trials) // 2
        return _fitted(reference, trials[:half], lending) + _fitted(reference, trials[half:], lending)
    if tries > 1:
        return _fitted(reference, trials, lending, tries - 1)
    return [Stopped(said, "out_of_memory")]


def _unlend(reference: Reference, trials: list[Trial]) -> None:
    """Every side of a batch that ran out lets go of the buffers it was lent, then this process frees them and its
    spare memory: a buffer a process still maps stays allocated here, and the sides timed next get new ones."""
    where, deadline = "letting go of its timing buffers", time.monotonic() + reference.options.timeout
    with suppress(Stopped, Rejected):  # a side that does not answer is left for its timing to report
        assert isinstance(reference.worker, Worker)
        reference.worker.answer({"cmd": "unlend"}, deadline, where)
    for trial in trials:
        with suppress(Stopped, Rejected):
            trial.ask({"cmd": "unlend"}, [], where)
    if reference.scratch.type == "cuda":
        handover.ipc_collect()
    spare(reference.scratch)


class Slots:
    """One side's arguments and output buffers for each place in a batch, on one shape: on a GPU, buffers the judge
    lends once (by CUDA IPC) and fills anew before each batch; on the CPU, tensors in each request."""

    def __init__(self, reference: Reference, lending: handover.Lending, key: str, metas: list[dict[str, Any]]) -> None:
        self.gpu = reference.scratch.type == "cuda" and all(m["device"] == "cuda" for m in metas)
        self.reference, self.lending, self.key, self.metas = reference, lending, key, metas
        self.inputs: dict[int, list[Any]] = {}  # place -> lent tensors (None for values), once made
        self.boxes: dict[int, list[Any]] = {}  # place -> lent output buffers

    def request(self, calls: list[tuple[int, tuple]]) -> tuple[dict[str, Any], list[Any]]:
        """The request's ``calls`` and ``boxes`` for (place, arguments) pairs, and the tensors it carries."""
        said: dict[str, Any] = {"calls": [], "boxes": [] if self.gpu else None}
        carried: list[Any] = []
        for place, args in calls:
            said["calls"].append([self._item(place, k, v, carried) for k, v in enumerate(args)])
            if self.gpu:
                said["boxes"].append(self._boxes(place))
        return said, carried

    def _item(self, place: int, k: int, value: Any, carried: list[Any]) -> dict[str, Any]:
        import torch

        if not isinstance(value, torch.Tensor):
            return {"value": handover.encode(value)}
        if not self.gpu:
            carried.append(value)
            return {"tensor": len(carried) - 1, "slot": f"{self.key}:in:{place}:{k}"}
        lent = self.inputs.setdefault(place, [])
        lent += [None] * (k + 1 - len(lent))
        # a place's buffer is lent anew when this call's input set is of another size (make_inputs may draw sizes)
        new = lent[k] is None or lent[k].shape != value.shape or lent[k].dtype != value.dtype
        if new:
            lent[k] = self.lending.mailbox(list(value.shape), str(value.dtype), self.reference.scratch)
        lent[k].copy_(value)
        item: dict[str, Any] = {"slot": f"{self.key}:in:{place}:{k}"}
        return item | ({"lent": handover.share(lent[k])} if new else {})

    def _boxes(self, place: int) -> list[dict[str, Any]]:
        new = place not in self.boxes
        if new:
            self.boxes[place] = [self.lending.mailbox(m["shape"], m["dtype"], self.reference.scratch) for m in self.metas]
        keys = [f"{self.key}:out:{place}:{k}" for k in range(len(self.metas))]
        return [{"slot": key} | ({"lent": handover.share(box)} if new else {}) for key, box in zip(keys, self.boxes[place])]

    def outputs(self, places: list[int], reply: dict[str, Any], carried: list[Any]) -> list[list[Any]]:
        """Each call's outputs, from the buffers it was lent or from the reply; Rejected when they are out of form."""
        sent, out = iter(carried), []
        try:
            for place, count, mailed in zip(places, reply["counts"], reply["mailed"]):
                boxes = self.boxes.get(place, [])
                out.append([boxes[k] if k in mailed else next(sent) for k in range(count)])
        except (KeyError, TypeError, IndexError, StopIteration):
            raise Rejected(
                "protocol", "the candidate's process answered a timed batch out of form (was its harness changed?)"
            ) from None
        return out


@dataclass
class _Shape:
    """One declared shape's timing in progress: each side's samples (event times), walls (until idle), the time it
    spent outside its calls by the judge's clock, and its buffers."""

    shape: tuple
    bases: list[tuple]  # the input sets the timed calls are varied from, in turn
    want: int  # samples each side needs at least
    samples: dict[int, list[float]] = field(default_factory=dict)
    walls: dict[int, list[list[float]]] = field(default_factory=dict)  # each batch's walls
    outside: dict[int, list[float]] = field(default_factory=dict)  # per batch: ms a call outside its calls
    batches: dict[int, list[list[float]]] = field(default_factory=dict)  # each batch's event times
    slots: dict[int, Slots] = field(default_factory=dict)
    written: bool = False  # the reference writes its inputs in place

    def paired(self, who: int) -> list[tuple[list[float], list[float]]]:
        """A side's batches as (event times, walls) pairs."""
        return list(zip(self.batches[who], self.walls[who]))


def _bases(reference: Reference, ids: list[int]) -> list[tuple]:
    """The timing sets' arguments as made (tensors where the judge compares), to vary from."""
    out = []
    for i in ids:
        expected = reference.expected[i]
        out.append(tuple(handover.decode(v) if kind == "value" else v for kind, v in expected.handed()))
    return out


def _time_together(reference: Reference, trials: list[Trial], lending: handover.Lending) -> list[Outcome]:
    groups = sorted(reference.timing.items(), key=lambda item: -max(reference.expected[s.id].input_bytes for s in item[1]))
    # as long as each candidate timed alone with the reference (half the budget each side), shared
    budget = TIME_BUDGET_S * (len(trials) + 1) / 2 / max(len(groups), 1)
    failed: dict[int, Stopped | Rejected] = {}
    shapes: dict[int, list[Timing]] = {i: [] for i in range(len(trials))}
    on_gpu = reference.device_name != "cpu"
    for rank, (shape, sets) in enumerate(groups):
        live = [i for i in range(len(trials)) if i not in failed]
        if not live:
            break
        metas = reference.expected[sets[0].id].metas
        timing = _Shape(shape, _bases(reference, [s.id for s in sets]), MIN_SAMPLES if rank == 0 else MIN_SAMPLES // 2)
        timing.written = any(reference.expected[s.id].in_place for s in sets)
        timing.slots = {i: Slots(reference, lending, f"{rank}:{i}", metas) for i in [REF, *live]}
        _time_shape(reference, trials, live, timing, budget, failed)
        for i in [i for i in live if i not in failed]:
            shapes[i].append(Timing.from_samples(timing.samples[REF], timing.samples[i], shape))
            _weigh(trials[i], timing, i, on_gpu)
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


def _weigh(trial: Trial, timing: _Shape, i: int, on_gpu: bool) -> None:
    """The warnings one shape's timing gives a candidate: work the events do not see, work outside its calls, and
    calls whose times are far from even (the work of many done in one)."""
    found = [
        checks.hidden_work(timing.paired(i), timing.paired(REF)) if on_gpu else None,
        checks.outside_calls(timing.outside[i], timing.outside[REF], timing.samples[i], on_gpu),
        checks.uneven_calls(timing.batches[i], timing.batches[REF]),
    ]
    for finding in found:  # one of each kind: the first shape that shows it
        if finding is not None and finding.kind not in {w.kind for w in trial.warnings}:
            trial.warnings.append(finding)


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
) -> None:
    """Rounds of batches on one shape until every side has its samples and the candidates their most calls, or the
    budget is spent; a side that fails leaves the rounds (the reference failing ends them for all)."""
    import torch

    timing.samples = {i: [] for i in [REF, *live]}
    timing.walls = {i: [] for i in [REF, *live]}
    timing.outside = {i: [] for i in [REF, *live]}
    timing.batches = {i: [] for i in [REF, *live]}
    generator = torch.Generator().manual_seed(int.from_bytes(os.urandom(8), "little") >> 1)  # never sent anywhere
    started, round_, ref_calls = time.monotonic(), 0, CALLS_PER_BATCH
    while live:
        prints = _one_round(reference, trials, live, timing, round_, ref_calls, failed, generator)
        first = prints.pop("first")
        for i in [i for i in live if i in prints and REF in prints]:
            try:
                trials[i].fingerprints(prints[i], prints[REF], timing.shape, first)
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
    generator: Any,
) -> dict[Any, Any]:
    """One batch from each side, in this round's order, on this round's inputs (made here, the same for every side):
    each side's fingerprints, and ``"first"``: the place in the batch of the reference's first call."""
    assert reference.worker is not None
    calls = [varied(timing.bases[(round_ * CALLS_PER_BATCH + j) % len(timing.bases)], generator) for j in range(CALLS_PER_BATCH)]
    first = secrets.randbelow(CALLS_PER_BATCH - ref_calls + 1)  # never sent to a candidate
    prints = Prints(int.from_bytes(os.urandom(4), "little"))  # the secret stays here
    order = [REF, *live]
    order = order[round_ % len(order) :] + order[: round_ % len(order)]
    found: dict[Any, Any] = {"first": first}
    for who in order:
        places = list(range(first, first + ref_calls)) if who == REF else list(range(CALLS_PER_BATCH))
        try:
            found[who] = _batch(reference, trials, who, timing, places, calls, prints)
        except (Stopped, Rejected) as stop:
            failed |= dict.fromkeys(live if who == REF else [who], stop)
            if who == REF:
                break
    return found


def _batch(
    reference: Reference, trials: list[Trial], who: int, timing: _Shape, places: list[int], calls: list[tuple], prints: Prints
) -> Any:
    """One side's batch: its request, its answer, what the judge's clock saw, and its calls' fingerprints."""
    import torch

    slots = timing.slots[who]
    said, carried = slots.request([(place, calls[place]) for place in places])
    said["written"] = timing.written
    where = f"while being timed on shape {timing.shape}"
    if reference.scratch.type == "cuda":
        torch.cuda.synchronize(reference.scratch)  # the lent inputs are written before the side reads them
    t0 = time.perf_counter()
    if who == REF:
        assert isinstance(reference.worker, Worker)
        reply, tensors = reference.worker.answer(
            {"cmd": "time", **said}, time.monotonic() + reference.options.timeout, where, tensors=carried
        )
    else:
        reply, tensors = trials[who].ask({"cmd": "time", **said, "keep": []}, [], where, tensors=carried)
    trusted = (time.perf_counter() - t0) * 1e3
    timing.samples[who] += reply["events_ms"]
    timing.batches[who].append(list(reply["events_ms"]))
    timing.walls[who].append(list(reply["walls_ms"]))
    timing.outside[who].append(max(0.0, trusted - sum(reply["spans_ms"])) / max(len(places), 1))
    if who != REF:
        trials[who].timed(reply, trusted)
    outputs = slots.outputs(places, reply, tensors)
    return torch.stack([prints.of(out) for out in outputs])
