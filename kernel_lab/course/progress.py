"""Which exercises are done, with their scores, in ``.kernel_lab/course/progress.json`` under the current
directory (beside the notebooks): a kernel restart loses nothing, and the file is plain JSON."""

from __future__ import annotations

import html
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from kernel_lab.display.html import boxed

RELATIVE = Path(".kernel_lab") / "course" / "progress.json"


def path() -> Path:
    """Where progress is kept: $KERNEL_LAB_COURSE_PROGRESS, else .kernel_lab/course/progress.json here."""
    given = os.environ.get("KERNEL_LAB_COURSE_PROGRESS")
    return Path(given) if given else Path.cwd() / RELATIVE


def load() -> dict:
    try:
        data = json.loads(path().read_text())
    except (OSError, ValueError):
        return {"exercises": {}}
    return data if isinstance(data.get("exercises"), dict) else {"exercises": {}}


def record(
    exercise_id: str, score: int, status: str, detail: str, *, gpu: bool | None = None, out_of: int = 100, ungraded: str = ""
) -> dict:
    """Keep this attempt: the best score so far, the last status, how many attempts.

    ``out_of``: the points that could be graded where it ran (a fix checked without a GPU: its correctness
    points only; CUDA without a GPU: none), ``ungraded``: what the rest needs, in words. The best score is
    the best at the fullest grading so far: a check on a GPU replaces the CPU's partial grade."""
    data = load()
    entry = data["exercises"].get(exercise_id, {"best": 0, "attempts": 0})
    fuller = int(out_of) > int(entry.get("out_of", 100)) or not entry.get("attempts")
    if fuller or int(out_of) == int(entry.get("out_of", 100)):
        entry["best"] = int(score) if fuller else max(int(entry.get("best", 0)), int(score))
        entry["out_of"], entry["ungraded"] = int(out_of), ungraded
    entry["attempts"] = int(entry.get("attempts", 0)) + 1
    entry["last"] = {"score": int(score), "status": status, "detail": detail[:500], "when": time.strftime("%Y-%m-%d %H:%M:%S")}
    if gpu is not None:
        entry["last"]["gpu"] = gpu
    data["exercises"][exercise_id] = entry
    target = path()
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(".partial")
    partial.write_text(json.dumps(data, indent=1, sort_keys=True))
    partial.replace(target)  # never a half-written file
    return entry


class Row(NamedTuple):
    """One exercise in the progress table."""

    lesson: str
    exercise: str
    kind: str  # diagnose, estimate, fix
    status: str
    best: int | None  # None: not attempted
    attempts: int
    out_of: int = 100  # points that could be graded where it was checked
    ungraded: str = ""  # what the other points need (a GPU)

    def shown(self) -> str:
        if self.best is None:
            return "–"
        if self.out_of >= 100:
            return f"{self.best:3d}"
        return f"{self.best}/{self.out_of}" if self.out_of else "n/a"


@dataclass(frozen=True)
class Progress:
    """The course's exercises with their status and best score (renders as a table).

    The score counts what could be graded: the answered exercises, each out of the points that could be
    graded where it was checked (without a GPU a fix's speed and roof cannot be, and are said to need one,
    not counted as 0)."""

    rows: tuple[Row, ...]
    where: Path

    @property
    def done(self) -> int:
        return sum(1 for r in self.rows if r.best is not None and r.out_of >= 100 and r.best >= 100)

    @property
    def answered(self) -> tuple[Row, ...]:
        return tuple(r for r in self.rows if r.attempts)

    @property
    def score(self) -> int | None:
        """Points scored over the points that could be graded, of the answered exercises (None: none yet)."""
        graded = [r for r in self.answered if r.out_of]
        return round(100 * sum(r.best or 0 for r in graded) / sum(r.out_of for r in graded)) if graded else None

    @property
    def needs_gpu(self) -> tuple[Row, ...]:
        """Answered exercises with points that could not be graded here."""
        return tuple(r for r in self.answered if r.out_of < 100)

    def headline(self) -> str:
        graded = sum(1 for r in self.answered if r.out_of)
        scored = "nothing graded yet" if self.score is None else f"score {self.score}/100 on the {graded} graded"
        more = f"; {len(self.needs_gpu)} need a GPU for the rest" if self.needs_gpu else ""
        return f"{self.done} of {len(self.rows)} exercises done; {scored}{more}"

    def _pending(self) -> list[str]:
        return [f"{r.lesson}.{r.exercise}: {r.ungraded or f'{100 - r.out_of} points not graded here'}" for r in self.needs_gpu]

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(str(self))

    def __str__(self) -> str:
        lines = [f"Course progress: {self.headline()}", f"  kept in {self.where}"]
        lines += [f"  not graded here: {p}" for p in self._pending()]
        for r in self.rows:
            tries = f" ({r.attempts} {'try' if r.attempts == 1 else 'tries'})" if r.attempts else ""
            lines.append(f"  {r.lesson + '.' + r.exercise:32s} {r.kind:9s} {r.shown():>5s}  {r.status}{tries}")
        return "\n".join(lines)

    @boxed
    def _repr_html_(self) -> str:
        body = []
        for r in self.rows:
            done = r.best is not None and r.out_of >= 100 and r.best >= 100
            if r.best is None or not r.out_of:
                bar = "" if r.best is None else "n/a"
            else:
                bar = f"<progress value='{r.best}' max='{r.out_of}'></progress> {html.escape(r.shown().strip())}"
            body.append(
                f"<tr style='background:{'#e8f5e9' if done else 'transparent'}'><td>{html.escape(r.lesson)}</td>"
                f"<td><code>{html.escape(r.exercise)}</code></td><td>{r.kind}</td><td>{bar}</td>"
                f"<td>{html.escape(r.status)}</td><td>{r.attempts or ''}</td></tr>"
            )
        pending = "".join(f"<li>{html.escape(p)}</li>" for p in self._pending())
        return (
            f"<p><b>Course progress</b>: {html.escape(self.headline())} "
            f"<small>(kept in <code>{html.escape(str(self.where))}</code>)</small></p>"
            + (f"<p>Not graded here:</p><ul>{pending}</ul>" if pending else "")
            + "<table class='text'><tr><th>lesson</th><th>exercise</th><th>kind</th><th>best score</th><th>last result</th><th>tries</th></tr>"
            + "".join(body)
            + "</table>"
        )


def progress() -> Progress:
    """Every exercise of the course with its status and best score, read from disk."""
    from kernel_lab.course import catalog
    from kernel_lab.course.model import Diagnose, Estimate

    entries = load()["exercises"]
    rows: list[Row] = []
    for lesson in catalog.all_lessons():
        for e in lesson.exercises:
            kind = "diagnose" if isinstance(e, Diagnose) else "estimate" if isinstance(e, Estimate) else "fix"
            entry = entries.get(f"{lesson.id}.{e.id}")
            if entry is None:
                rows.append(Row(lesson.id, e.id, kind, "not attempted", None, 0))
            else:
                rows.append(
                    Row(
                        lesson.id,
                        e.id,
                        kind,
                        entry["last"]["status"],
                        int(entry["best"]),
                        int(entry["attempts"]),
                        int(entry.get("out_of", 100)),
                        str(entry.get("ungraded", "")),
                    )
                )
    return Progress(tuple(rows), path())
