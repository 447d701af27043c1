"""Which exercises are done, with their scores, in ``.kernel_lab/course/progress.json`` under the current
directory (beside the notebooks): a kernel restart loses nothing, and the file is plain JSON."""

from __future__ import annotations

import html
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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


def record(exercise_id: str, score: int, status: str, detail: str, *, gpu: bool | None = None) -> dict:
    """Keep this attempt: the best score so far, the last status, how many attempts."""
    data = load()
    entry = data["exercises"].get(exercise_id, {"best": 0, "attempts": 0})
    entry["attempts"] = int(entry.get("attempts", 0)) + 1
    entry["best"] = max(int(entry.get("best", 0)), int(score))
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


@dataclass(frozen=True)
class Progress:
    """The course's exercises with their status and best score (renders as a table)."""

    rows: tuple[tuple[str, str, str, str, int | None, int], ...]  # lesson, exercise, kind, status, best, attempts
    where: Path

    @property
    def done(self) -> int:
        return sum(1 for r in self.rows if r[4] is not None and r[4] >= 100)

    @property
    def score(self) -> int:
        """Mean best score over every exercise of the course (not attempted: 0)."""
        return round(sum(r[4] or 0 for r in self.rows) / len(self.rows)) if self.rows else 0

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(str(self))

    def __str__(self) -> str:
        lines = [f"Course progress ({self.where}): {self.done} of {len(self.rows)} exercises done, score {self.score}/100"]
        for lesson, exercise, kind, status, best, attempts in self.rows:
            shown = "–" if best is None else f"{best:3d}"
            lines.append(
                f"  {lesson + '.' + exercise:32s} {kind:9s} {shown:>4s}  {status}" + (f" ({attempts} tries)" if attempts else "")
            )
        return "\n".join(lines)

    @boxed
    def _repr_html_(self) -> str:
        body = []
        for lesson, exercise, kind, status, best, attempts in self.rows:
            done = best is not None and best >= 100
            bar = "" if best is None else f"<progress value='{best}' max='100'></progress> {best}"
            body.append(
                f"<tr style='background:{'#e8f5e9' if done else 'transparent'}'><td>{html.escape(lesson)}</td>"
                f"<td><code>{html.escape(exercise)}</code></td><td>{kind}</td><td>{bar}</td>"
                f"<td>{html.escape(status)}</td><td>{attempts or ''}</td></tr>"
            )
        return (
            f"<p><b>Course progress</b>: {self.done} of {len(self.rows)} exercises done, score {self.score}/100 "
            f"<small>(kept in <code>{html.escape(str(self.where))}</code>)</small></p>"
            "<table class='text'><tr><th>lesson</th><th>exercise</th><th>kind</th><th>best score</th><th>last result</th><th>tries</th></tr>"
            + "".join(body)
            + "</table>"
        )


def progress() -> Progress:
    """Every exercise of the course with its status and best score, read from disk."""
    from kernel_lab.course import catalog
    from kernel_lab.course.model import Diagnose, Estimate

    entries = load()["exercises"]
    rows: list[tuple[str, str, str, str, int | None, int]] = []
    for lesson in catalog.all_lessons():
        for e in lesson.exercises:
            kind = "diagnose" if isinstance(e, Diagnose) else "estimate" if isinstance(e, Estimate) else "fix"
            entry = entries.get(f"{lesson.id}.{e.id}")
            if entry is None:
                rows.append((lesson.id, e.id, kind, "not attempted", None, 0))
            else:
                rows.append((lesson.id, e.id, kind, entry["last"]["status"], int(entry["best"]), int(entry["attempts"])))
    return Progress(tuple(rows), path())
