"""A profiler for the loop's tests: a recorded report for whatever cell it is given, as if it had profiled that cell."""

from __future__ import annotations

import dataclasses

from kernel_lab.profiling.replay import ReplayProfiler


class EveryCell(ReplayProfiler):
    """Replays ``path`` for every cell and keeps which cells it was given; ``live``: the profile says it was made now
    (not replayed, matching the cell), as a GPU's would."""

    profiles_cells = True

    def __init__(self, path, live: bool = False):
        super().__init__(path)
        self.cells: list[str] = []
        self.live = live

    def collect(self, cell, settings, on_progress=None, output=None):
        self.cells.append(cell.text)
        profile = super().collect(cell, settings, on_progress, output)
        return dataclasses.replace(profile, replay=False, mismatch="") if self.live else profile
