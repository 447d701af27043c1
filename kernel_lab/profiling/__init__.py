"""Profilers: how a cell's kernels become a :class:`~kernel_lab.models.Profile`.

Every backend has one method, ``collect(cell, settings, on_progress, output) -> Profile``:

* :class:`~kernel_lab.profiling.ncu.NcuProfiler`: the cell in a fresh process under Nsight Compute;
* :class:`~kernel_lab.profiling.trace.TraceProfiler`: a torch.profiler trace (no hardware counters);
* :class:`~kernel_lab.profiling.replay.ReplayProfiler`: a recorded report, nothing run;
* :class:`Fallback`: one profiler, and another when the first fails in an expected way (counters
  refused, no GPU), with a note saying so.

The optimize loop and the course take a profiler; tests hand them a replaying one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol

from kernel_lab.cells import CellSource
from kernel_lab.errors import CountersNotPermittedError, KernelLabError
from kernel_lab.models import Profile
from kernel_lab.settings import Settings


@dataclass(frozen=True)
class Progress:
    """A progress event of a profiling run (ncu's replay passes of one kernel launch)."""

    kernel: str  # kernel being profiled
    number: int  # 1-based count of profiled launches so far
    percent: int  # replay progress of this launch, 0..100
    passes: int | None = None  # set when the launch is done


OnProgress = Callable[[Progress], None]


class Profiler(Protocol):
    """Anything that turns a cell into a profile."""

    @property
    def name(self) -> str:
        """What it is, in a word or two ("ncu", "replay")."""
        ...

    @property
    def profiles_cells(self) -> bool:
        """Whether it profiles the cell it is given (a replaying profiler returns one report for any cell)."""
        ...

    def collect(
        self, cell: CellSource, settings: Settings, on_progress: OnProgress | None = None, output: Path | None = None
    ) -> Profile:
        """Profile ``cell``; ``output`` is where a report should be kept (if the backend writes one)."""
        ...


@dataclass(frozen=True)
class Fallback:
    """``first``, and ``then`` when ``first`` raises one of ``when``; the profile says what happened."""

    first: Profiler
    then: Profiler
    when: tuple[type[KernelLabError], ...] = (CountersNotPermittedError,)

    @property
    def name(self) -> str:
        return f"{self.first.name}, else {self.then.name}"

    @property
    def profiles_cells(self) -> bool:
        return self.first.profiles_cells

    def collect(
        self, cell: CellSource, settings: Settings, on_progress: OnProgress | None = None, output: Path | None = None
    ) -> Profile:
        try:
            return self.first.collect(cell, settings, on_progress, output)
        except self.when as err:
            profile = self.then.collect(cell, settings, on_progress, output)
            return replace(profile, notes=(err.message, *profile.notes))


def default() -> Profiler:
    """What ``%%profile`` and ``kernel_lab.profile`` use: Nsight Compute, else a trace when counters are refused."""
    from kernel_lab.profiling.ncu import NcuProfiler
    from kernel_lab.profiling.trace import TraceProfiler

    return Fallback(NcuProfiler(), TraceProfiler())


def or_replay(report: str | Path) -> Profiler:
    """Nsight Compute where there is a GPU and ncu, else the recorded ``report`` (saying so)."""
    from kernel_lab.errors import NcuNotFoundError, NoGpuError
    from kernel_lab.profiling.replay import ReplayProfiler

    return Fallback(default(), ReplayProfiler(Path(report)), when=(NoGpuError, NcuNotFoundError))
