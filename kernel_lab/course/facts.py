"""The numbers a lesson's text cites, computed from a report (recorded or live), never typed in.

Position against the roof: the least time the problem needs on this GPU (its :class:`Work` over the
roof's peak, the peak read from the report) divided by the time the kernels took. Only the bytes the
problem must move count (each input read once, each output written once), so wasted traffic is not
progress; the dashboard's roofline, which plots the bytes a kernel really moved, is quoted beside it.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kernel_lab import metrics as M
from kernel_lab.course.model import Lesson, Work
from kernel_lab.display.html import boxed

if TYPE_CHECKING:
    from kernel_lab.analysis.roofline import KernelRoofline
    from kernel_lab.models import Bottleneck, Diagnosis
    from kernel_lab.results.profile import Result


def mb(n: float) -> str:
    return f"{n / 1e6:,.0f} MB"


@dataclass(frozen=True)
class KernelFacts:
    """One kernel launch: its summary row (the dashboard's columns), roofline label and ranked bottlenecks."""

    name: str
    duration_us: float
    row: dict
    label: str  # the dashboard's words: "at 90% of the DRAM roof"
    bottlenecks: tuple[Bottleneck, ...]
    roofline: KernelRoofline

    @property
    def top(self) -> Bottleneck | None:
        return self.bottlenecks[0] if self.bottlenecks else None

    def bottleneck(self, kind: str) -> Bottleneck | None:
        """Its bottleneck of this kind, if the conductor ranks it."""
        return next((b for b in self.bottlenecks if b.kind == kind), None)

    metrics: dict = field(default_factory=dict, repr=False)  # every metric of the launch, by Nsight Compute name

    def metric(self, name: str) -> float | None:
        """A metric of this launch by its Nsight Compute name (None when not collected)."""
        return self.metrics.get(name)


@dataclass(frozen=True)
class Facts:
    """What one version of a lesson measured: durations, bytes, position against the roof, bottlenecks."""

    lesson: str
    version: str
    device: str
    replay: bool  # from a recorded report (True) or profiled now
    kernels: tuple[KernelFacts, ...]
    work: Work | None
    roof: str  # "DRAM" or a compute ceiling ("Tensor BF16/FP16")
    roof_peak: float | None  # B/s or FLOP/s, from the report

    @property
    def duration_us(self) -> float:
        """Time of all the version's kernels together (Nsight Compute's gpu__time_duration)."""
        return sum(k.duration_us for k in self.kernels)

    @property
    def main(self) -> KernelFacts:
        """The kernel that takes longest."""
        return max(self.kernels, key=lambda k: k.duration_us)

    @property
    def top(self) -> Bottleneck | None:
        """The conductor's first-ranked bottleneck of the longest kernel."""
        return self.main.top

    def bottleneck(self, kind: str) -> Bottleneck | None:
        """The longest kernel's bottleneck of this kind, if the conductor ranks it."""
        return self.main.bottleneck(kind)

    @property
    def dram_bytes(self) -> float:
        """Bytes the kernels read from and wrote to DRAM, as measured."""
        return sum(k.row.get("dram_bytes") or 0.0 for k in self.kernels)

    @property
    def least_us(self) -> float | None:
        """The least time the problem needs: its work over the roof's peak."""
        if self.work is None or not self.roof_peak:
            return None
        amount = self.work.bytes if self.roof == "DRAM" else self.work.flops
        return amount / self.roof_peak * 1e6 if amount else None

    @property
    def roof_fraction(self) -> float | None:
        """Share of the roof reached: least time / measured time."""
        least = self.least_us
        return least / self.duration_us if least and self.duration_us else None

    @property
    def achieved(self) -> float | None:
        """Useful bytes/s (DRAM roof) or FLOP/s (compute roof) of the whole version."""
        if self.work is None or not self.duration_us:
            return None
        amount = self.work.bytes if self.roof == "DRAM" else self.work.flops
        return amount / (self.duration_us * 1e-6)

    def value(self, column: str) -> float | None:
        """A summary column (the dashboard's, e.g. "dram_pct") of the longest kernel."""
        return self.main.row.get(column)

    def position(self) -> str:
        """'at 37% of the DRAM roof (counting the 403 MB the problem needs)'."""
        if self.roof_fraction is None:
            return "no roof to measure against"
        what = f"the {mb(self.work.bytes)} the problem needs" if self.roof == "DRAM" and self.work else "the problem's FLOPs"
        return f"at {self.roof_fraction:.0%} of the {self.roof} roof (counting {what})"

    def sentence(self) -> str:
        """One sentence with the key numbers, as the lessons print them."""
        where = "recorded on" if self.replay else "measured now on"
        parts = [f"{self.version}: {self.duration_us:,.1f} µs {where} the {self.device}"]
        if self.roof_fraction is not None:
            parts.append(self.position())
        if self.roof == "DRAM" and self.kernels and any(k.row.get("dram_bytes") for k in self.kernels):
            parts.append(f"{mb(self.dram_bytes)} moved to and from DRAM")
        top = self.top
        parts.append(f"top bottleneck {top.kind} (score {top.score:.2f})" if top else "no bottleneck ranked")
        return "; ".join(parts) + "."

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(str(self))

    def __str__(self) -> str:
        return self.sentence()

    @boxed
    def _repr_html_(self) -> str:
        rows = "".join(
            f"<tr><td><code>{html.escape(k.name)}</code></td><td>{k.duration_us:,.1f} µs</td><td>{html.escape(k.label)}</td>"
            f"<td>{html.escape(k.top.kind) if k.top else '–'}</td></tr>"
            for k in self.kernels
        )
        return (
            f"<p>{html.escape(self.sentence())}</p><table class='text'><tr><th>kernel</th><th>duration</th>"
            f"<th>roofline (dashboard)</th><th>top bottleneck</th></tr>{rows}</table>"
        )


def _kernel_facts(d: Diagnosis) -> KernelFacts:
    from kernel_lab.analysis.roofline import roofline
    from kernel_lab.results.tables import summary_row

    k = d.kernel
    rf = roofline(k)
    return KernelFacts(
        name=k.name,
        duration_us=(k.get(M.DURATION) or 0.0) / 1000,
        row=summary_row(k, d),
        label=rf.label(),
        bottlenecks=tuple(d.bottlenecks),
        roofline=rf,
        metrics=dict(k.metrics),
    )


def of_result(result: Result, lesson: Lesson, version: str, work: Work | None, roof: str) -> Facts:
    """Facts of any result (a recorded report, or a live profile of a student's version)."""
    kernels = tuple(_kernel_facts(d) for d in result.diagnoses)
    peak = None
    if kernels:
        main = max(kernels, key=lambda k: k.duration_us).roofline
        ceiling = main.memory.get("DRAM") if roof == "DRAM" else main.compute.get(roof)
        peak = ceiling.value if ceiling is not None else None
    devices = sorted({k.device for k in result.profile.kernels}) or ["GPU"]
    return Facts(lesson.id, version, ", ".join(devices), result.profile.replay, kernels, work, roof, peak)


def work_and_roof(lesson: Lesson, version: str) -> tuple[Work | None, str]:
    v = lesson.version(version)
    fix = lesson.fix
    work = v.work or (fix.work if fix else None)
    roof = v.roof or (fix.target.roof if fix else "DRAM")
    return work, roof


def facts(lesson_id: str | int, version: str) -> Facts:
    """The facts of a recorded version of a lesson: ``course.facts("01_roofline", "naive")``."""
    from kernel_lab.course import catalog

    the_lesson = catalog.lesson(lesson_id)
    work, roof = work_and_roof(the_lesson, version)
    return of_result(catalog.diagnosis(the_lesson.id, version), the_lesson, version, work, roof)
