"""Replay: a recorded report (``.ncu-rep``) or torch.profiler trace (``.json``) instead of a live run."""

from __future__ import annotations

import re
import shutil
from dataclasses import replace
from pathlib import Path

from kernel_lab.cells import CellSource, kernel_names
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
        if said := mismatch(profile, cell.text):
            profile = replace(profile, mismatch=said)
        if output is not None and self.path.suffix == ".ncu-rep":
            Path(output).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(self.path, output)  # a session keeps the report its diagnosis came from
        return profile


def mismatch(profile: Profile, source: str) -> str:
    """What differs between a recorded report and the cell it is replayed over: none of the report's kernels is one the
    cell defines (then the diagnosis and its source lines are another kernel's); "" when they match, or the cell defines
    no kernel of its own (a library's kernels, torch.compile's)."""
    mine = kernel_names(source)
    recorded = sorted({k.name for k in profile.kernels})
    if not mine or not recorded or any(re.search(rf"\b{re.escape(n)}\b", k) for n in mine for k in recorded):
        return ""
    theirs = ", ".join(k.split("(")[0] for k in recorded[:3]) + (", ..." if len(recorded) > 3 else "")
    return (
        f"it does not match this cell: its kernels ({theirs}) are not the cell's ({', '.join(mine)}), so the diagnosis"
        " and its source lines are of another kernel; profile the cell on a GPU, or replay a report of this cell"
    )
