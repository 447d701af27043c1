"""The judge: is a candidate version of a cell correct, and is it faster? Decided here, in the trusted parent.

The rooms: the reference's process and results (:mod:`~kernel_lab.verify.reference`), one candidate's trial
(:mod:`~kernel_lab.verify.trial`), the round's timing (:mod:`~kernel_lab.verify.timing`), the checks that weigh what
was measured (:mod:`~kernel_lab.verify.checks`), the processes themselves (:mod:`~kernel_lab.verify.sandbox`). The
:class:`Judge` keeps one reference for a session and runs each round's concurrency, in this order:

1. :meth:`Judge.start` (optional, ahead of need): the reference's process loads the cell, and the first round's
   candidates' processes start; with ``prepare``, the reference then makes its input sets and results, one set a turn
   on the GPU (:meth:`Judge.quiet` lets a caller's timings in between).
2. :meth:`Judge.check_many`: each candidate's cell loads in its process while the reference prepares (if it has
   not); the next round's processes start; once the reference's results are made, the candidates are checked in
   parallel (:data:`parallel` at a time); one that ran out of memory beside others is checked again alone; the first
   check to finish has the reference record its kernels (once); the right ones are timed together; the verdicts
   come back, and the round's processes are waited for in the background (the next round and :meth:`Judge.quiet`
   wait for them).
3. :meth:`Judge.close`: unused processes go back for the next judge (``keep_spares``) or end; the reference ends.

``on_phase`` hears each step with its duration (:class:`Phase`), for benchmarks and progress.
"""

from __future__ import annotations

import functools
import importlib
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from kernel_lab import fastbuild
from kernel_lab.errors import out_of_memory
from kernel_lab.verify import handover, timing, workers
from kernel_lab.verify.reference import REFERENCE_TIMEOUT, Options, Reference, own_memory, spare
from kernel_lab.verify.trial import Rejected, Trial
from kernel_lab.verify.turns import Turns
from kernel_lab.verify.verdict import Verdict
from kernel_lab.verify.workers import Stopped, Worker, ended

T = TypeVar("T")
JudgeEvents = Callable[[int, str], None]  # (candidate index, state)


@dataclass(frozen=True)
class Phase:
    """One step of the judge, done: ``name`` ("reference: load", "candidate: checks", "round: timing", ...), who
    (``"reference"`` or the candidate's index in its round), when it ended (``time.perf_counter()``), how long it took."""

    name: str
    who: str
    ended: float
    seconds: float


_listeners: list[Callable[[Phase], None]] = []  # every judge's phases, for benchmarks (see watch)


@contextmanager
def watch(listener: Callable[[Phase], None]) -> Iterator[None]:
    """While held, ``listener`` hears every judge's phases (a judge made inside ``kernel_lab.optimize`` too)."""
    _listeners.append(listener)
    try:
        yield
    finally:
        _listeners.remove(listener)


class Judging(Protocol):
    """What the optimize loop needs of a judge: a round's candidates judged against its reference."""

    def check_many(self, sources: list[str], on_event: JudgeEvents | None = None) -> list[Verdict]: ...

    def refused(self) -> Verdict | None:
        """Why nothing can be judged at all, once the reference's cost is known (None: it can be)."""
        ...


def _in_background(work: Callable[[float], T], deadline: float) -> Future[T]:
    """``work(deadline)`` on a thread of its own; its result (or exception) in the future returned."""
    pool = ThreadPoolExecutor(1)
    future = pool.submit(work, deadline)
    pool.shutdown(wait=False)
    return future


def import_torch_soon() -> None:
    """Import torch in this process in a background thread, now that nothing waits on this process: the judge needs
    it here on its first comparison, and importing it holds the interpreter for seconds, during which the screen's
    and the judge's threads here stall (3.5 s of round 1 on the H100: benchmarks/race_h100_memo)."""
    if "torch" not in sys.modules:
        threading.Thread(target=importlib.import_module, args=("torch",), name="import torch", daemon=True).start()


def parallel() -> int:
    """How many candidates a judge checks at once (a process each: Python, torch and compilers work in parallel)."""
    return max(1, min(4, (os.cpu_count() or 2) // 2))


class Judge:
    """Judges candidates against one reference cell (see the module docstring for the order of things).

    Use as a context manager (or call :meth:`close`); :meth:`check` never raises, it returns a Verdict.
    """

    def __init__(
        self,
        reference_source: str,
        options: Options | None = None,
        device: str | None = None,
        *,
        time: bool = True,
        keep_spares: bool = False,
    ) -> None:
        self.options = options or Options()
        self.device, self.time, self.keep_spares = device, time, keep_spares
        self.reference_source = reference_source
        self.on_phase: Callable[[Phase], None] | None = None
        self.parallel = parallel()  # candidates checked at once
        self._turns = Turns()  # the GPU: a caller's timings (see quiet) go before the reference's preparation
        self._lending = handover.Lending()  # memory lent to candidates (inputs, buffers for outputs)
        self._lock = threading.Lock()
        self._widest = 1  # the most candidates judged in one round so far
        self._spare: list[Worker] = []  # candidates' processes started for the next round
        self._loading: Future[dict[str, Any]] | None = None  # the reference loading, from start()
        self._preparing: Future[None] | None = None  # its inputs and results being made
        self._ending: threading.Thread | None = None  # the last round's processes being waited for
        self._header: subprocess.Popen | None = None  # precompiling torch's header for CUDA candidates
        self.reference = Reference(reference_source, self.options, device, self._turns)

    def __enter__(self) -> Judge:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _phase(self, name: str, who: str, started: float) -> None:
        now = time.perf_counter()
        for listener in [*([self.on_phase] if self.on_phase else []), *_listeners]:
            listener(Phase(name, who, now, now - started))

    # the reference, once -------------------------------------------------------------------------------

    def start(self, *, prepare: bool = False) -> None:
        """Start the reference's process and load its cell, and the first candidates' processes, in the background.
        ``prepare``: then make the input sets and the reference's results on the GPU too, an input set at a time;
        else nothing runs on the GPU until the first :meth:`check`."""
        with self._lock:
            if self._loading is None and self._preparing is None:
                # with nothing to prepare yet, the reference loads the profiler at once (the caller's own work, a
                # profile, hides it); else after its results are made
                self._loading = _in_background(functools.partial(self._load, warm=not prepare), self.reference.deadline)
                self._spare += [self._spawn() for _ in range(self.parallel)]
                if "<<<" in self.reference_source and self._header is None and self.reference.scratch.type == "cuda":
                    self._header = fastbuild.prepare_in_background()  # candidates' builds need it (~40 s, once)
            if prepare and self._preparing is None:
                self._preparing = _in_background(self._prepare, self.reference.deadline)

    def _load(self, deadline: float, *, warm: bool = False) -> dict[str, Any]:
        started = time.perf_counter()
        loaded = self.reference.load(deadline, warm=warm)
        self._phase("reference: load", "reference", started)
        return loaded

    def _prepare(self, deadline: float) -> None:
        """The reference's input sets and results, once its cell is loaded (by :meth:`start`, or now)."""
        loading, self._loading = self._loading, None
        started = time.perf_counter()
        self.reference.prepare(loading.result if loading is not None else functools.partial(self._load, deadline), deadline)
        self._phase("reference: prepare", "reference", started)

    def refused(self) -> Verdict | None:
        """Why nothing can be judged at all (the reference cannot be judged against, or is too slow for the CPU
        interpreter), as soon as the reference's cost is known: its first shape's input sets made (preparing them
        now, when nothing has); None when candidates can be judged."""
        with self._lock:
            if self._preparing is None:
                self._preparing = _in_background(self._prepare, self.reference.deadline)
        self.reference.sized.wait()
        return self.reference.broken

    def wait_prepared(self) -> None:
        """Return once the reference's inputs and results that :meth:`start` began making are there."""
        if self._preparing is not None:
            self.reference.made.wait()

    @contextmanager
    def quiet(self) -> Iterator[None]:
        """While held, nothing of the judge's runs on the GPU: the last round's processes are gone, and the
        reference's preparation waits between input sets (for a caller's timings: the screen's)."""
        self._round_ended()
        with self._turns.timing():
            yield

    def _record_reference(self, deadline: float) -> None:
        """Have the reference record its kernels (once), after its preparation loaded the profiler."""
        started = time.perf_counter()
        self.reference.observe(deadline, self._preparing)
        self._phase("reference: record of its kernels", "reference", started)

    # candidates ----------------------------------------------------------------------------------------

    def _spawn(self) -> Worker:
        """A candidate process, started before its cell is known, or one started ahead that has loaded nothing."""
        return workers.take(workers.SANDBOX, "candidate", self.device, self.options.timeout, warm=True)

    def _started(self) -> Worker:
        return self._spare.pop(0) if self._spare else self._spawn()

    def _trial(self, index: int, source: str) -> Trial:
        """A candidate's trial in a started process; its steps are phases of this judge."""
        return Trial(
            self.reference, self._started(), source, self._lending, lambda name, started: self._phase(name, str(index), started)
        )

    def check(self, candidate_source: str) -> Verdict:
        """Judge one candidate (a whole cell); never raises."""
        return self.check_many([candidate_source])[0]

    def check_many(self, sources: list[str], on_event: JudgeEvents | None = None) -> list[Verdict]:
        """Judge one round's candidates (step 2 of the module docstring); never raises. ``on_event(index, state)``
        hears each candidate's progress: "checking", "timing", "done"."""
        say = on_event or (lambda index, state: None)
        self._round_ended()
        with self._lock:
            deadline = self.reference.deadline
            trials = [self._trial(i, source) for i, source in enumerate(sources)]
            self._widest = max(self._widest, len(sources))
            self._spare += [self._spawn() for _ in range(self._widest - len(self._spare))]
            if self._preparing is None:
                self._preparing = _in_background(self._prepare, deadline)
            self.reference.made.wait()
            if self.reference.broken is not None:
                ended((trial.candidate for trial in trials), wait=False)
                return [self.reference.broken] * len(sources)
            for trial in trials:
                trial.start()
            verdicts = self._checks(trials, sources, deadline, say)
            if self.reference.broken is not None:  # the reference stopped while its kernels were recorded
                ended((trial.candidate for trial in trials), wait=False)
                return [self.reference.broken] * len(sources)
            self._timings(trials, verdicts, say)
            for index, trial in enumerate(trials):
                trial.candidate.close()
                say(index, "done")
            self._ending = threading.Thread(target=self._end, args=([t.candidate for t in trials],), daemon=True)
            self._ending.start()
            return [v for v in verdicts if v is not None]

    def _checks(self, trials: list[Trial], sources: list[str], deadline: float, say: JudgeEvents) -> list[Verdict | None]:
        """Each candidate checked (None: right so far), in parallel; those that ran out of memory beside others
        checked again alone, in a fresh process (running out counts against a candidate only when alone)."""
        record = functools.partial(self._record_reference, deadline)

        def correct(index: int) -> Verdict | None:
            say(index, "checking")
            started = time.perf_counter()
            try:
                trials[index].check(record)
                return None
            except (Stopped, Rejected) as stop:
                trials[index].candidate.close()
                return trials[index].verdict(False, str(stop), failure=stop.kind)
            except Exception as err:
                if not out_of_memory(err):
                    raise
                trials[index].candidate.close()
                return trials[index].verdict(False, own_memory(err), failure="out_of_memory")
            finally:
                self._phase("candidate: checks", str(index), started)

        with ThreadPoolExecutor(max_workers=max(1, min(len(trials), self.parallel))) as pool:
            verdicts: list[Verdict | None] = list(pool.map(correct, range(len(trials))))
        crowded = [i for i, v in enumerate(verdicts) if v is not None and v.failure == "out_of_memory"]
        if self.parallel > 1 and len(verdicts) > 1 and crowded:
            for index in [i for i, v in enumerate(verdicts) if v is None]:  # checked: their input sets go back
                trials[index].forget()
            spare(self.reference.scratch)  # this process's spare memory goes first
            for index in crowded:
                trials[index] = self._trial(index, sources[index])
                verdicts[index] = correct(index)
        return verdicts

    def _timings(self, trials: list[Trial], verdicts: list[Verdict | None], say: JudgeEvents) -> None:
        """The right candidates timed together; their verdicts (in place of the Nones)."""
        right = [index for index, verdict in enumerate(verdicts) if verdict is None]
        for index in right:
            say(index, "timing")
        started = time.perf_counter()
        timed = timing.time_round(self.reference, [trials[i] for i in right], self._lending) if self.time else [() for _ in right]
        self._phase("round: timing", "round", started)
        for index, outcome in zip(right, timed):
            trial = trials[index]
            if isinstance(outcome, (Stopped, Rejected)):
                verdicts[index] = trial.verdict(False, str(outcome), failure=outcome.kind)
            else:
                verdicts[index] = trial.verdict(True, "ok", outcome)

    def _end(self, processes: list[Worker]) -> None:
        """Wait for a round's processes to end, then free what was handed over to them by CUDA IPC."""
        ended(processes)
        if self.reference.scratch.type == "cuda":
            handover.ipc_collect()  # the copies handed over and let go

    def _round_ended(self) -> None:
        if self._ending is not None:
            self._ending.join()

    def close(self) -> None:
        """Step 3 of the module docstring."""
        self._round_ended()
        if self._header is not None:
            self._header.poll()  # left to finish: the next judge of a CUDA cell uses the header too
        if self.keep_spares:  # never given a cell: the next judge's
            workers.keep(self._spare)
        else:
            ended(self._spare, wait=False)
        self._spare = []
        self._lending.close()
        pending = self._preparing or self._loading
        self._loading = self._preparing = None
        if pending is not None:  # still loading or preparing, maybe: the reference's process ends once it is done
            pending.add_done_callback(lambda _: self.reference.close())
        else:
            self.reference.close()


def verify(
    reference_source: str,
    candidate_source: str,
    *,
    seeds: int = 3,
    rtol: float | None = None,
    atol: float | None = None,
    time: bool = True,
    timeout: float = 120.0,
    device: str | None = None,
) -> Verdict:
    """Judge ``candidate_source`` against ``reference_source`` (whole cells); see :class:`Judge`.

    The reference cell's ``run`` defines the expected result and its ``SHAPES``/``make_inputs`` the inputs
    (``seeds`` input sets per shape). ``rtol``/``atol`` override the dtype-aware defaults; ``time`` times both
    versions when the candidate is correct; ``timeout`` (s) bounds the whole judgement; ``device`` ("cpu",
    "cuda", "cuda:1") defaults to the GPU when there is one. A candidate that fails, hangs or crashes gives
    ``correct=False`` with the reason and its kind, never an exception.
    """
    if seeds < 1:
        raise ValueError(f"seeds must be at least 1, not {seeds}")
    with Judge(reference_source, Options(seeds, rtol, atol, timeout), device, time=time) as judge:
        return judge.check(candidate_source)


__all__ = [
    "REFERENCE_TIMEOUT",
    "Judge",
    "Judging",
    "Options",
    "Phase",
    "Verdict",
    "import_torch_soon",
    "parallel",
    "verify",
    "watch",
]
