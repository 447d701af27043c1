"""Replay: a recorded report (``.ncu-rep``) or torch.profiler trace (``.json``) instead of a live run."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

from kernel_lab.cells import CellSource
from kernel_lab.models import Profile
from kernel_lab.profiling import report, trace
from kernel_lab.profiling.base import OnProgress
from kernel_lab.settings import Settings


def load(path: str | Path) -> Profile:
    """The profile recorded at ``path`` (no GPU needed), marked as replayed."""
    path = Path(path)
    if path.suffix in (".json", ".gz"):
        return replace(trace.load(path), replay=True)
    return report.load(path, replay=True)


class ReplayProfiler:
    """Returns the recorded report whatever the cell; the cell is not run."""

    name = "replay"
    profiles_cells = False

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    def collect(
        self, cell: CellSource, settings: Settings, on_progress: OnProgress | None = None, output: Path | None = None
    ) -> Profile:
        profile = load(self.path)
        if output is not None and self.path.suffix == ".ncu-rep":
            Path(output).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(self.path, output)  # a session keeps the report its diagnosis came from
        return profile
