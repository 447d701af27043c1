"""A graded answer as the student reads it: a score, each part right or why not, and, once something was
answered, what the profile and the lesson say about it (never before: an empty answer reveals nothing)."""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Any

from kernel_lab.display.html import boxed

COLORS = {"right": "#2e7d32", "partly": "#ef6c00", "wrong": "#c62828", "missing": "#757575"}


@dataclass(frozen=True)
class Part:
    """One graded part of an answer."""

    name: str  # kind, limiter, line, metric, value
    verdict: str  # right, partly, wrong, missing
    given: str
    message: str
    credit: float  # 0..1
    weight: float


@dataclass(frozen=True)
class Feedback:
    """The graded answer: a score out of 100 and, for each part, right or why not."""

    exercise: str
    question: str
    against: str  # what it was checked against
    parts: tuple[Part, ...]
    summary: str  # what the profile says, in the conductor's words
    reading: str = ""  # what the lesson says about the answer

    @property
    def answered(self) -> bool:
        """Whether anything was answered (an empty answer is not graded and reveals nothing)."""
        return any(p.verdict != "missing" for p in self.parts)

    @property
    def score(self) -> int:
        total = sum(p.weight for p in self.parts)
        return round(100 * sum(p.credit * p.weight for p in self.parts) / total) if total else 0

    @property
    def correct(self) -> bool:
        return all(p.verdict == "right" for p in self.parts)

    def _unanswered(self) -> str:
        return f'Fill in your answer and run the cell again; course.solution("{self.exercise}") shows the answer without one.'

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(str(self))

    def __str__(self) -> str:
        if not self.answered:
            return f"{self.exercise}: not answered yet. {self._unanswered()}"
        lines = [f"{self.exercise}: {self.score}/100 (checked against {self.against})"]
        for p in self.parts:
            lines.append(f"  [{p.verdict.upper():7s}] {p.name} = {p.given or '(none)'}: {p.message}")
        lines.append(f"  The profile: {self.summary}")
        if self.reading:
            lines.append(f"  The lesson: {self.reading}")
        return "\n".join(lines)

    @boxed
    def _repr_html_(self) -> str:
        if not self.answered:
            return f"<p><b>{html.escape(self.exercise)}</b>: not answered yet. {html.escape(self._unanswered())}</p>"
        rows = "".join(
            f"<tr><td><b style='color:{COLORS.get(p.verdict, '#000')}'>{p.verdict}</b></td><td>{html.escape(p.name)}</td>"
            f"<td><code>{html.escape(p.given or '(none)')}</code></td><td>{html.escape(p.message)}</td></tr>"
            for p in self.parts
        )
        reading = f"<p><i>The lesson:</i> {html.escape(self.reading)}</p>" if self.reading else ""
        return (
            f"<div><p><b>{html.escape(self.exercise)}</b>: <b>{self.score}/100</b> "
            f"<small>(checked against {html.escape(self.against)})</small></p>"
            f"<table class='text'>{rows}</table><p><i>The profile:</i> {html.escape(self.summary)}</p>{reading}</div>"
        )
