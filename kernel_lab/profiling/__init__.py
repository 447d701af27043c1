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

from pathlib import Path

from kernel_lab.profiling.base import Fallback, OnProgress, Profiler, Progress, close, start_ahead

__all__ = ["Fallback", "OnProgress", "Profiler", "Progress", "close", "default", "or_replay", "start_ahead"]


def default(ahead: bool = False) -> Profiler:
    """What ``%%profile`` and ``kernel_lab.profile`` use: Nsight Compute, else a trace when counters are refused.

    ``ahead``: start each next profiling process as soon as one ends, for a caller that profiles version after
    version (the optimize loop); :func:`close` ends the last one."""
    from kernel_lab.profiling.ncu import NcuProfiler
    from kernel_lab.profiling.trace import TraceProfiler

    return Fallback(NcuProfiler(ahead), TraceProfiler())


def or_replay(report: str | Path) -> Profiler:
    """Nsight Compute where there is a GPU and ncu, else the recorded ``report`` (saying so)."""
    from kernel_lab.errors import NcuNotFoundError, NoGpuError
    from kernel_lab.profiling.replay import ReplayProfiler

    return Fallback(default(), ReplayProfiler(Path(report)), when=(NoGpuError, NcuNotFoundError))
