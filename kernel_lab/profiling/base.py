"""What every profiler has in common: the protocol, its progress events, and the fall-back between two."""

from __future__ import annotations

import contextlib
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

    def close(self) -> None:
        close(self.first)
        close(self.then)

    def start_ahead(self, cell: CellSource, settings: Settings) -> None:
        start_ahead(self.first, cell, settings)


def start_ahead(profiler: Profiler, cell: CellSource, settings: Settings) -> None:
    """Start what a profiler needs for its next profile of ``cell`` now, if it starts anything ahead (where it
    cannot, its next profile says why)."""
    if (start := getattr(profiler, "start_ahead", None)) is not None:
        with contextlib.suppress(KernelLabError):
            start(cell, settings)


def close(profiler: Profiler) -> None:
    """End what a profiler keeps running between profiles (a process started ahead), if it keeps anything."""
    getattr(profiler, "close", lambda: None)()
