"""The cell's time outside its kernels: launch overhead, host work and allocations between them.

Nsight Compute replays each kernel alone, under a profiler that makes launches slow, so its report has no timeline:
the gaps come from a torch.profiler trace of the cell when there is one (``<report>.trace.json`` beside the report,
or the trace itself), as the range's wall time less the time some kernel runs. Without one they are estimated only
where the record shows launches shorter than launching them costs (the GPU then waits for the CPU: about
``LAUNCH_COST_NS`` less the kernel's duration per launch, the launch_overhead rule's constant), and otherwise said to
be not measured.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from kernel_lab.analysis.rules.launch_overhead import LAUNCH_COST_NS
from kernel_lab.models import Gaps

NO_TIMELINE = "an Nsight Compute report has no timeline"
HOW_TO_MEASURE = (
    "a torch.profiler trace of the cell beside the report would measure them (python -m kernel_lab.profiling.runner"
    " CELL.py --trace REPORT.trace.json writes one)"
)


def from_events(events: Iterable[Mapping[str, Any]]) -> Gaps | None:
    """The gaps of a chrome trace's complete events (``ph`` "X", ``ts`` and ``dur`` in µs): the wall time from the
    first event to the end of the last, against the union of the kernels' intervals; None without kernels."""
    spans = [(float(e["ts"]), float(e["ts"]) + float(e.get("dur", 0))) for e in events if e.get("ph") == "X" and "ts" in e]
    kernels = sorted(
        (float(e["ts"]), float(e["ts"]) + float(e.get("dur", 0))) for e in events if e.get("cat") == "kernel" and "ts" in e
    )
    if not kernels or not spans:
        return None
    wall = max(end for _, end in spans) - min(start for start, _ in spans)
    busy, reach = 0.0, float("-inf")
    for start, end in kernels:  # the union of the kernels' intervals (overlapping streams count once)
        busy += max(0.0, end - max(start, reach))
        reach = max(reach, end)
    gap = max(0.0, wall - busy)
    said = (
        f"launch gaps: {gap / wall:.0%} of the range's {wall:,.1f} µs wall time is outside kernels ({len(kernels)} kernels run"
        f" {busy:,.1f} µs), measured from a torch.profiler trace"
    )
    return Gaps("measured", gap / wall if wall else 0.0, gap * 1000, wall * 1000, said)


def read_trace(path: Path) -> list[dict] | None:
    """The events of a torch.profiler chrome trace, or None when it cannot be read."""
    try:
        with gzip.open(path, "rt") if path.suffix == ".gz" else path.open() as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        return None
    events = data.get("traceEvents") if isinstance(data, dict) else None
    return events if isinstance(events, list) else None


def trace_of(origin: str) -> Path | None:
    """The trace a profile's gaps can be measured from: the origin itself when it is a trace, else a
    ``.trace.json`` (or ``.trace.json.gz``) beside the report."""
    path = Path(origin)
    if path.name.endswith((".json", ".json.gz")):
        return path if path.exists() else None
    stem = path.name.split(".")[0]
    return next((p for p in (path.with_name(stem + ".trace.json"), path.with_name(stem + ".trace.json.gz")) if p.exists()), None)


def estimated(durations: Sequence[float]) -> Gaps:
    """From the launches' durations alone: the time the GPU waits for launches shorter than their cost."""
    waits = sum(max(0.0, LAUNCH_COST_NS - d) for d in durations)
    total = sum(durations) + waits
    short = sum(d < LAUNCH_COST_NS for d in durations)
    if len(durations) < 2 or not waits:
        longer = (
            f"; each of the {len(durations)} launches runs longer than the ~{LAUNCH_COST_NS / 1000:.0f} µs a launch costs,"
            " so the GPU need not wait between them"
            if len(durations) >= 2
            else ""
        )
        return Gaps("not measured", None, None, None, f"launch gaps: not measured ({NO_TIMELINE}){longer}; {HOW_TO_MEASURE}")
    each = (
        f"its {len(durations)} launches each run"
        if short == len(durations)
        else f"{short} of its {len(durations)} launches run{'s' if short == 1 else ''}"
    )
    said = (
        f"launch gaps: about {waits / total:.0%} of the cell's time, estimated: {each}"
        f" shorter than the ~{LAUNCH_COST_NS / 1000:.0f} µs a launch from Python costs, so the GPU waits for the next"
        f" ({NO_TIMELINE}; {HOW_TO_MEASURE})"
    )
    return Gaps("estimated", waits / total, waits, None, said)


def gaps(origin: str, durations: Sequence[float]) -> Gaps:
    """The gaps of a profile from ``origin``: measured from its trace where there is one, else :func:`estimated`."""
    trace = trace_of(origin)
    events = read_trace(trace) if trace is not None else None
    measured = from_events(events) if events else None
    return measured if measured is not None else estimated(durations)
