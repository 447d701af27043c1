"""A workload's kernels by time: what ``%%profile --all-kernels`` shows for a cell that calls a library or a
compiled model. Each kernel (its launches together) with its share of the profiled GPU time, its roofline point
and first bottleneck, and where its source is (the launch record's file and line, else the report's copy of
the file that defines it); the fewest kernels that cover :data:`COVER` of the time are named first.

Nsight Compute runs the kernels one at a time and keeps no timeline, so the gaps between launches and the CPU
time around them are not in a report: the table says so instead of guessing them, and the shares are of the
profiled kernels' summed time, not of the step's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kernel_lab import metrics as M
from kernel_lab.analysis.roofline import roofline
from kernel_lab.models import Diagnosis, Kernel, LaunchRecord, Profile

if TYPE_CHECKING:
    from kernel_lab.results.profile import Result

COVER = 0.8  # the kernels named first take at least this share of the profiled time together
GAPS = (
    "Gaps between launches and CPU time around them: not measured (Nsight Compute runs kernels one at a time and "
    "keeps no timeline); time the whole step (benchmarks/lift_step.py does, with triton.testing.do_bench)."
)
ONLY_TRITON = (
    "Every kernel here is a Triton kernel: if the step launches others (cuBLAS GEMMs, torch's own), the profiler's "
    "kernel filter left them out and this is not the whole step; profile with --all-kernels to see them."
)
NO_RECORD = "No launch record beside the report: sources come from the report alone, and no kernel can be lifted."


@dataclass(frozen=True)
class Row:
    """One kernel of the workload (all its launches)."""

    kernel: str
    launches: int
    time_us: float | None  # its launches' summed GPU time
    share: float | None  # of the profiled kernels' summed GPU time
    cumulative: float | None  # this kernel's and the longer ones' shares
    roof: str | None
    roof_pct: float | None  # % of that roof reached, by its longest launch
    bottleneck: str | None  # the conductor's first finding for its longest launch
    summary: str | None  # that finding in one line
    origin: str  # "Triton", "torch.compile" (a kernel Inductor wrote) or "not Triton" (no source: cuBLAS, CUDA C++)
    file: str | None
    line: int | None
    liftable: bool  # a Triton launch of it was recorded: kernel_lab.lift can make it a cell


@dataclass(frozen=True)
class Workload:
    """The profile's kernels by time, and what the table cannot say."""

    result: Result
    rows: tuple[Row, ...]
    top: tuple[str, ...]  # the fewest kernels covering COVER of the time, longest first
    notes: tuple[str, ...]

    @property
    def replay(self) -> bool:
        return self.result.profile.replay

    def headline(self) -> str:
        if not self.top:
            return "No kernel duration was collected: the kernels cannot be ranked by time."
        covered = sum(r.share or 0 for r in self.rows if r.kernel in self.top)
        named = ", ".join(f"{r.kernel} ({r.share:.0%})" for r in self.rows if r.kernel in self.top and r.share is not None)
        many = "One kernel takes" if len(self.top) == 1 else f"{len(self.top)} kernels take"
        return f"{many} {covered:.0%} of the profiled GPU time: {named}."

    @property
    def liftable(self) -> list[str]:
        """The kernels a Triton launch of which was recorded, longest first."""
        return [r.kernel for r in self.rows if r.liftable]

    def lift(self, kernel: str | None = None) -> str:
        """The cell lifted from ``kernel`` (default: the longest liftable one), as text (the dashboard's Lift)."""
        from kernel_lab.lifting.pick import lift

        return lift(self.result.profile, kernel).cell

    def __str__(self) -> str:
        from kernel_lab.lifting.view import text

        return text(self)

    def _repr_html_(self) -> str:
        from kernel_lab.lifting.view import html

        return html(self)

    def _repr_mimebundle_(self, include: object = None, exclude: object = None) -> dict:
        from kernel_lab.frontend import mimebundle
        from kernel_lab.widgets.dashboard import dashboard

        return mimebundle(str(self), self._repr_html_(), lambda: dashboard(self.result, workload=self))


def _where(kernel: str, launch: LaunchRecord | None, sources: dict[str, str]) -> tuple[str | None, int | None]:
    if launch is not None:
        return launch.file, launch.line
    for path, text in sources.items():
        found = re.search(rf"^\s*def\s+{re.escape(kernel)}\s*\(", text, re.M)
        if found and "/triton/language/" not in path:
            return path, text.count("\n", 0, found.start()) + 1
    return None, None


def _origin(launch: LaunchRecord | None, file: str | None) -> str:
    if (launch is not None and launch.origin == "inductor") or (file is not None and "torchinductor" in file):
        return "torch.compile"
    return "not Triton" if file is None else "Triton"


def rows(profile: Profile, diagnoses: tuple[Diagnosis, ...] = ()) -> tuple[Row, ...]:
    """The workload's rows, longest first (kernels without a duration last, in report order)."""
    by_index = {d.kernel.index: d for d in diagnoses}
    recorded = {x.kernel: x for x in reversed(profile.record.launches)} if profile.record else {}
    groups: dict[str, list[Kernel]] = {}
    for k in profile.kernels:
        groups.setdefault(k.name, []).append(k)
    total = sum(k.get(M.DURATION) or 0 for k in profile.kernels)
    found = []
    for name, kernels in groups.items():
        times = [k.get(M.DURATION) for k in kernels]
        time = sum(t for t in times if t is not None) if any(t is not None for t in times) else None
        longest = max(kernels, key=lambda k: k.get(M.DURATION) or 0)
        reached = roofline(longest).reached()
        diagnosis = by_index.get(longest.index)
        first = diagnosis.bottlenecks[0] if diagnosis and diagnosis.bottlenecks else None
        launch = recorded.get(name)
        file, line = _where(name, launch, dict(longest.source_files))
        found.append(
            Row(
                name, len(kernels), None if time is None else time / 1000, time / total if time and total else None,
                None, reached[1] if reached else None, 100 * reached[0] if reached else None,
                first.kind if first else None, first.summary if first else None,
                _origin(launch, file), file, line, launch is not None,
            )
        )  # fmt: skip
    found.sort(key=lambda r: -(r.time_us or -1))
    out, running = [], 0.0
    for r in found:
        running += r.share or 0
        out.append(Row(**{**r.__dict__, "cumulative": running if r.share is not None else None}))
    return tuple(out)


def workload(result: Result) -> Workload:
    """The table of ``result``'s kernels by time (see the module docstring)."""
    table = rows(result.profile, result.diagnoses)
    top: list[str] = []
    for r in table:
        if r.share is None or (top and sum(x.share or 0 for x in table if x.kernel in top) >= COVER):
            break
        top.append(r.kernel)
    notes = [GAPS]
    if result.profile.record is None:
        notes.append(NO_RECORD)
    elif table and all(r.origin != "not Triton" for r in table):
        notes.append(ONLY_TRITON)
    return Workload(result, table, tuple(top), tuple(notes))
