"""The answer to an exercise, shown only when asked for (``course.solution(...)``): for a diagnosis, what the
conductor ranks first (both kinds of a tie), the line, the limiter, metrics that show it, and what the lesson
says about it; for an estimate, the measured value; for a fix, the reference solution."""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Any

from kernel_lab.course import catalog
from kernel_lab.course.checking import Solution, reference_solution
from kernel_lab.course.facts import facts, mb
from kernel_lab.course.grading import reading, tied
from kernel_lab.course.model import Diagnose, Estimate, Fix
from kernel_lab.display.html import boxed


@dataclass(frozen=True)
class AnswerKey:
    """The expected answer of a diagnosis or estimate exercise; hidden in a notebook until clicked."""

    exercise: str
    question: str
    answer: tuple[str, ...]  # one line per part: "kind: memory_bound (...)"
    reading: str

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(str(self))

    def __str__(self) -> str:
        lines = [f"The answer to {self.exercise} ({self.question})", *(f"  {a}" for a in self.answer)]
        return "\n".join(lines + ([f"  The lesson: {self.reading}"] if self.reading else []))

    @boxed
    def _repr_html_(self) -> str:
        items = "".join(f"<li>{html.escape(a)}</li>" for a in self.answer)
        said = f"<p><i>The lesson:</i> {html.escape(self.reading)}</p>" if self.reading else ""
        return (
            f"<details><summary><b>Show the answer to <code>{html.escape(self.exercise)}</code></b> "
            f"(answer it first)</summary><p>{html.escape(self.question)}</p><ul>{items}</ul>{said}</details>"
        )


def _diagnosis(lesson_id: str, ex: Diagnose) -> tuple[str, ...]:
    f = facts(lesson_id, ex.version)
    top = f.top
    assert top is not None
    d = next(d for d in catalog.diagnosis(lesson_id, ex.version).diagnoses if d.kernel.name == f.main.name)
    ties = tied(d)
    out = [f"kind: {' or '.join(ties or (top.kind,))} ({top.summary})" + (f". {d.uncertain}" if ties else "")]
    if ex.ask_limiter and top.limiter:
        out.append(f"limiter: {top.limiter}")
    if ex.ask_line and top.source_lines:
        s = top.source_lines[0]
        out.append(f"line: {s.line} of {s.file.rsplit('/', 1)[-1]}: {s.text.strip()}")
    shown = [f"{m} = {v:,.3g}" for m, v in top.evidence.items() if m in f.main.metrics and isinstance(v, (int, float))]
    out.append(f"metric, one of: {'; '.join(shown[:6])}")
    return tuple(out)


def _estimate(lesson_id: str, ex: Estimate) -> tuple[str, ...]:
    f = facts(lesson_id, ex.version)
    if ex.measure == "dram_bytes":
        return (
            f"measured: {mb(f.dram_bytes)} to and from DRAM",
            *(f"{k.name}: {mb(k.row.get('dram_bytes') or 0)}" for k in f.kernels),
        )
    return (f"measured: {f.duration_us:,.1f} µs",)


def solution(exercise_id: str) -> AnswerKey | Solution:
    """The answer to an exercise: a diagnosis's or an estimate's, with what the lesson says about it, or a fix's
    reference solution with its recorded profile; in a notebook hidden until clicked."""
    lesson, ex = catalog.exercise(exercise_id)
    if isinstance(ex, Fix):
        return reference_solution(exercise_id)
    lines = _diagnosis(lesson.id, ex) if isinstance(ex, Diagnose) else _estimate(lesson.id, ex)
    return AnswerKey(exercise_id, ex.question, lines, reading(lesson, ex))
