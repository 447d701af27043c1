"""Screening: many launch-parameter variants of a cell, checked and timed quickly in warm processes.

A variant that only changes the launch parameters of the cell's own Triton kernels (the literals that set their
block sizes, ``num_warps`` and ``num_stages``, and the grid's literals that follow them) runs the user's own
code: it is not hostile, so it needs none of the judge's isolation per candidate.
:func:`kernel_lab.rewrite.launch.parameter_only` decides that in the trusted parent, from the syntax trees alone;
:class:`Screener` refuses anything else.

The screen loads the original once per worker process (``kernel_lab.verify.screen_worker``), makes one
input (the judge's headline shape: the declared one whose inputs hold the most bytes; a fresh seed) and its
expected outputs, then for each variant: compile by running it once on poisoned memory and compare with the
original (workers in parallel: a variant whose outputs differ, unwritten elements included, is wrong and never
timed), then time it (one worker at a time, caches flushed before each call, the device's clock, the median): first a quick look at each variant, then
a full timing of those the quick look puts near the fastest (a variant far behind cannot be the fastest, so its
quick time stands). The best few then go through the full judge (:class:`kernel_lab.verify.judge.Judge`), which
alone gives verdicts.
"""

from __future__ import annotations

import os
import random
import shutil
import tempfile
import time
import weakref
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from kernel_lab.rewrite.base import Measured
from kernel_lab.rewrite.launch import parameter_only
from kernel_lab.settings import Settings
from kernel_lab.verify import workers
from kernel_lab.verify.workers import Stopped, Worker, ended

PREPARE_TIMEOUT = 120.0  # seconds to compile and check one variant
TIME_BUDGET_MS = 40.0  # timing of one variant: calls within this budget (at least 3)
QUICK_MS, QUICK_CALLS = 4.0, 8  # a quick look at each variant first: calls within 4 ms (3 to 8)
CONTENDER = 1.2  # a variant whose quick look is within this factor of the quickest is then timed in full
WARM_MS = 50.0  # calls not timed before a screen's first timing: the GPU sat idle while variants compiled
MOST_CALLS = 50
KEEP_SHARE = 0.15  # of the device's memory: loaded workers holding less stay loaded, idle, while the judge works


class Screening(Protocol):
    """Quick measurements of launch-parameter variants."""

    def measure(self, variants: list[str]) -> Measured:
        """Each variant's time, or why it has none, and the original's launches as they ran."""

    def rest(self) -> None:
        """Leave the GPU to the judge until the next :meth:`screen`."""


@dataclass(frozen=True)
class Screened:
    """How a variant did in the screen: its median time (ms) over ``calls`` calls, or why it has none."""

    ms: float | None
    reason: str = ""
    calls: int = 0


def count(device: str | None) -> int:
    """How many worker processes a screen runs on ``device`` (variants compile in parallel, one per process)."""
    cpus = os.cpu_count() or 2
    return 1 if device == "cpu" or cpus < 8 else min(8, cpus // 2)


class Screener:
    """Screens parameter variants of one cell; holds its worker processes (use as a context manager)."""

    def __init__(self, original: str, settings: Settings | None = None, device: str | None = None, workers: int = 0) -> None:
        self.original, self.settings, self.device = original, settings or Settings(), device
        self.count = workers or count(device)
        self.folder = Path(tempfile.mkdtemp(prefix="kernel_lab_screen_"))
        weakref.finalize(self, shutil.rmtree, self.folder, True)
        self._workers: list[Worker] = []  # loaded: the original and the screening input are there
        self._held: dict[int, int] = {}  # bytes each loaded worker holds (by its process id) ...
        self._memory = 0  # ... of the device's memory
        self.keep_share = KEEP_SHARE
        self._booted: list[Worker] = []  # started ahead, nothing loaded yet
        self._variants = 0
        self.seed = random.SystemRandom().randrange(1 << 31)
        self.broken: str | None = None  # why nothing can be screened (the original fails here)
        self._original: Screened | None = None  # the original's time, taken once
        self.launched: dict[str, dict[str, int]] = {}  # the original's launches as they ran (its first worker's)
        self.quiet: Callable[[], AbstractContextManager[None]] = nullcontext  # held, nothing else runs on the GPU
        self._cold = False  # the next timing is a screen's first: the GPU may have sat idle

    def __enter__(self) -> Screener:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self) -> None:
        """Start the workers' processes now: Python, torch and Triton load in them while the caller does other
        work. Nothing runs on the GPU until :meth:`screen` loads the original there."""
        while len(self._booted) < self.count:
            self._booted.append(self._boot())

    def rest(self) -> None:
        """Leave the GPU to the judge. Loaded workers stay, idle, as many as hold together at most ``keep_share`` of
        the device's memory: the next :meth:`screen` uses them as they are (seconds sooner: nothing to load), the
        fewer compiling in parallel. When none fits, all stop (they die in the background while the judge loads its
        candidates) and fresh processes start for the next :meth:`screen`, which loads the original in them again."""
        each = max(self._held.values(), default=0)
        kept = len(self._workers) if not each else min(len(self._workers), int(self.keep_share * self._memory // each))
        gone, self._workers = self._workers[kept:], self._workers[:kept]
        for worker in gone:
            self._held.pop(worker.proc.pid, None)
        ended(gone, wait=False)
        if not self._workers:
            self.start()

    def close(self) -> None:
        """Stop the workers that loaded the original (they die in the background); those that loaded nothing are
        kept for the next screen (:func:`kernel_lab.verify.workers.keep`) unless ``optimize_ahead`` is off."""
        ended(self._workers, wait=False)
        if self.settings.optimize_ahead:
            workers.keep(self._booted)
        else:
            ended(self._booted, wait=False)
        self._workers, self._booted = [], []

    def _boot(self) -> Worker:
        return workers.take(workers.SCREEN, "screen", self.device, PREPARE_TIMEOUT)

    def _load(self, worker: Worker) -> Worker:
        """``worker`` with the original loaded and the screening input made (Stopped when it cannot)."""
        request = {"cmd": "load", "path": str(self.folder / "original.py"), "seed": self.seed}
        reply, _ = worker.answer(request, time.monotonic() + max(PREPARE_TIMEOUT, self.settings.verify_timeout), "while loading")
        self._held[worker.proc.pid], self._memory = reply["held"], reply["memory"]
        self.launched = self.launched or reply["launched"]
        return worker

    def _start(self) -> None:
        """Load the original in each worker (in parallel), starting those not started ahead."""
        (self.folder / "original.py").write_text(self.original)  # once: workers read it while others load
        self.start()
        booted, self._booted = self._booted, []
        with ThreadPoolExecutor(self.count) as pool:
            futures = [pool.submit(self._load, worker) for worker in booted]
            for future in futures:
                try:
                    self._workers.append(future.result())
                except Stopped as stop:
                    self.broken = str(stop)

    def measure(self, variants: list[str]) -> Measured:
        """:meth:`screen`'s results as the search reads them: each variant's time, or why it has none."""
        _, screened = self.screen(variants)
        return Measured(tuple(s.ms for s in screened), tuple(s.reason for s in screened), self.launched)

    def screen(self, variants: list[str]) -> tuple[Screened, list[Screened]]:
        """(the original, each variant): checked on the screening input and timed, in the order given."""
        if not self._workers and self.broken is None:
            self._start()
        if self.broken is not None or not self._workers:
            why = f"the original cannot be screened: {self.broken}"
            return Screened(None, why), [Screened(None, why) for _ in variants]
        results: list[Screened | None] = [None] * len(variants)
        ids: dict[int, int] = {}  # variant index -> id in its worker, once prepared
        jobs: list[list[tuple[int, int]]] = [[] for _ in self._workers]  # per worker: (variant index, id)
        for index, source in enumerate(variants):
            if not parameter_only(self.original, source):
                results[index] = Screened(None, "changes more than launch parameters: judged in full, not screened")
                continue
            self._variants += 1  # here, not in the workers' threads: each variant its own id and file
            (self.folder / f"variant_{self._variants}.py").write_text(source)
            jobs[index % len(self._workers)].append((index, self._variants))

        def prepare(w: int) -> None:
            for index, id in jobs[w]:
                if self.broken is not None:
                    return
                path = self.folder / f"variant_{id}.py"
                request = {"cmd": "prepare", "id": id, "path": str(path)}
                request |= {"rtol": self.settings.rtol, "atol": self.settings.atol}
                try:
                    reply, _ = self._workers[w].ask(request, time.monotonic() + PREPARE_TIMEOUT, "while compiling")
                except Stopped as stop:
                    results[index] = Screened(None, str(stop))
                    self._restart(w)
                    continue
                if "error" in reply:
                    results[index] = Screened(None, reply["error"])
                else:
                    ids[index] = reply["id"]

        with ThreadPoolExecutor(len(self._workers)) as pool:
            list(pool.map(prepare, range(len(self._workers))))
        with self.quiet():
            self._cold = True
            if self._original is None or self._original.ms is None:
                self._original = self._time(0, -1)
            ready = [(w, index) for w, job in enumerate(jobs) for index, _ in job if index in ids]
            quick = {index: self._time(w, ids[index], QUICK_MS, QUICK_CALLS) for w, index in ready} if len(ready) > 1 else {}
            quickest = min((q.ms for q in quick.values() if q.ms is not None), default=0.0)
            for w, index in ready:
                look = quick.get(index)
                near = look is None or (look.ms is not None and look.ms <= CONTENDER * quickest)
                results[index] = self._time(w, ids[index]) if near else look
        return self._original, [r if r is not None else Screened(None, "not screened") for r in results]

    def _time(self, w: int, id: int, budget_ms: float = TIME_BUDGET_MS, most: int = MOST_CALLS) -> Screened:
        if self.broken is not None:
            return Screened(None, self.broken)
        request = {"cmd": "time", "id": id, "budget_ms": budget_ms, "most": most, "warm_ms": WARM_MS * self._cold}
        self._cold = False
        try:
            reply, _ = self._workers[w].ask(request, time.monotonic() + PREPARE_TIMEOUT, "while timing")
        except Stopped as stop:
            self._restart(w)
            return Screened(None, str(stop))
        return Screened(None, reply["error"]) if "error" in reply else Screened(float(reply["ms"]), calls=reply["calls"])

    def _restart(self, w: int) -> None:
        """A fresh worker in place of one that hung or crashed (its variants are gone); when none starts,
        the screen is broken (the rest of its variants come back unscreened)."""
        self._workers[w].close()
        self._held.pop(self._workers[w].proc.pid, None)
        try:
            self._workers[w] = self._load(self._boot())
        except Stopped as stop:
            self.broken = str(stop)
