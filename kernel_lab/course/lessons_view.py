"""The course at a glance: ``course.lessons()``."""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Any

from kernel_lab.course import catalog
from kernel_lab.course.model import Lesson
from kernel_lab.display.html import boxed


@dataclass(frozen=True)
class Lessons:
    items: tuple[Lesson, ...]

    def __iter__(self):
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, i: int) -> Lesson:
        return self.items[i]

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(str(self))

    def __str__(self) -> str:
        return "\n".join(f"{x.number:2d}. {x.title} — {x.summary}  ({x.id}.ipynb)" for x in self.items)

    @boxed
    def _repr_html_(self) -> str:
        rows = "".join(
            f"<tr><td>{x.number}</td><td><b>{html.escape(x.title)}</b></td><td>{html.escape(x.summary)}</td>"
            f"<td><code>{x.id}.ipynb</code></td><td>{', '.join(e.id for e in x.exercises)}</td></tr>"
            for x in self.items
        )
        return f"<table class='text'><tr><th></th><th>lesson</th><th>what you learn</th><th>notebook</th><th>exercises</th></tr>{rows}</table>"


def lessons() -> Lessons:
    """Every lesson of the course, in order."""
    return Lessons(catalog.all_lessons())


@dataclass(frozen=True)
class VersionTable:
    """Recorded versions of a lesson side by side: time, share of the roof, DRAM traffic, top bottleneck."""

    lesson: Lesson
    rows: tuple  # Facts

    def _cells(self) -> list[tuple[str, ...]]:
        base = self.rows[0].duration_us if self.rows else 1.0
        out: list[tuple[str, ...]] = []
        for f in self.rows:
            frac = "–" if f.roof_fraction is None else f"{f.roof_fraction:.0%} of {f.roof}"
            top = f"{f.top.kind} ({f.top.score:.2f})" if f.top else "–"
            out.append(
                (
                    f.version,
                    f"{f.duration_us:,.1f} µs",
                    f"{base / f.duration_us:.2f}x",
                    frac,
                    f"{f.dram_bytes / 1e6:,.0f} MB",
                    top,
                )
            )
        return out

    def __str__(self) -> str:
        head = (
            "version",
            "time",
            f"vs {self.rows[0].version}" if self.rows else "",
            "roof (problem's work)",
            "DRAM traffic",
            "top bottleneck",
        )
        rows = [head, *self._cells()]
        widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
        return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths)) for r in rows)

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(str(self))

    @boxed
    def _repr_html_(self) -> str:
        head = f"<tr><th>version</th><th>time</th><th>vs {html.escape(self.rows[0].version) if self.rows else ''}</th>"
        head += "<th>share of the roof (counting the problem's work)</th><th>DRAM traffic</th><th>top bottleneck</th></tr>"
        body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in r) + "</tr>" for r in self._cells())
        return f"<table class='text'>{head}{body}</table><p><small>Recorded on the {html.escape(self.rows[0].device) if self.rows else 'GPU'}.</small></p>"


def table(lesson_id: str | int, versions: list[str] | None = None) -> VersionTable:
    """The recorded versions of a lesson side by side (first: the one the others are compared with); by
    default the naive version first, then the attempts, then the reference (examples stay first)."""
    from kernel_lab.course.facts import facts

    the_lesson = catalog.lesson(lesson_id)
    order = ("example", "naive", "attempt", "reference")
    recorded = sorted((v for v in the_lesson.versions if v.recorded), key=lambda v: order.index(v.role))
    names = versions or [v.name for v in recorded]
    return VersionTable(the_lesson, tuple(facts(the_lesson.id, n) for n in names))
