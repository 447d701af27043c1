"""Answers are never shown before they are asked for (issue #43): nothing a lesson prints or says in an
exercise's section names its answer until the student has answered, and an empty answer reveals nothing.

The exercise's section is the notebook's ``## `` section that holds its ``course.answer`` cell. Its code
cells run here in-process, in order, after every cell before them (the magics, which draw the profile the
student reads, are left out: the dashboard and the roofline figures are the readings an answer is made
from, not an answer printed below it)."""

from __future__ import annotations

import ast
import html
import io
import re
from contextlib import redirect_stdout

import jupytext
import nbformat
import pytest
from conftest import ROOT

from kernel_lab import course
from kernel_lab.course import catalog
from kernel_lab.course.facts import mb
from kernel_lab.course.model import Diagnose, Estimate

QUESTIONS = [(x, e) for x in catalog.all_lessons() for e in x.exercises if isinstance(e, (Diagnose, Estimate))]


@pytest.fixture(autouse=True)
def progress_here(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("KERNEL_LAB_COURSE_PROGRESS", raising=False)


def answers_of(lesson, ex) -> list[str]:
    """What would give the answer away, lower-case: the kind in its spellings, the conductor's summary and the
    line's code (diagnosis), or the measured value (estimate)."""
    f = course.facts(lesson.id, ex.version)
    if isinstance(ex, Estimate):
        return [mb(f.dram_bytes).lower()]
    top = f.top
    kind = top.kind
    out = [kind, kind.replace("_", " "), kind.replace("_", "-"), top.summary.lower()]
    if ex.ask_line:
        out.append(re.sub(r"\s+", " ", top.source_lines[0].text).strip().lower())
    if ex.ask_limiter and top.limiter:
        out.append(f"limited by {top.limiter.replace('_', ' ')}")
    return out


def shown(source: str, namespace: dict) -> str:
    """What a code cell shows: its prints and the value of its last expression (text and HTML; not figures)."""
    tree = ast.parse(source)
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    out = io.StringIO()
    with redirect_stdout(out):
        exec(compile(tree, "<cell>", "exec"), namespace)  # noqa: S102 - the lesson's own cells
        value = eval(compile(ast.Expression(last.value), "<cell>", "eval"), namespace) if last else None
    text = out.getvalue()
    if value is not None and not type(value).__module__.startswith("plotly"):
        text += "\n" + str(value)
        if hasattr(value, "_repr_html_"):
            text += "\n" + html.unescape(re.sub(r"<[^>]+>", " ", value._repr_html_()))
    return text


def sections(lesson_id: str) -> list[list]:
    """The notebook's cells, split at its ``## `` headings."""
    parts: list[list] = [[]]
    for cell in jupytext.read(ROOT / "tutorials" / f"{lesson_id}.md").cells:
        if cell.cell_type != "markdown":
            parts[-1].append(cell)
            continue
        for i, chunk in enumerate(re.split(r"(?m)^(?=## )", cell.source)):
            if i or chunk.startswith("## "):
                parts.append([])
            parts[-1].append(nbformat.v4.new_markdown_cell(chunk))
    return parts


def runnable(source: str) -> str | None:
    if source.startswith("%%"):
        return None
    return "\n".join(line for line in source.splitlines() if not line.startswith("%"))


@pytest.mark.parametrize(("lesson", "exercise"), QUESTIONS, ids=[f"{x.id}.{e.id}" for x, e in QUESTIONS])
def test_an_exercise_section_never_shows_its_answer_before_it_is_answered(lesson, exercise):
    eid = f"{lesson.id}.{exercise.id}"
    parts = sections(lesson.id)
    index = next(i for i, p in enumerate(parts) if any(f'course.answer("{eid}"' in c.source for c in p))
    namespace: dict = {}
    for part in parts[:index]:
        for cell in part:
            if cell.cell_type == "code" and (code := runnable(cell.source)):
                shown(code, namespace)
    seen = []
    for cell in parts[index]:
        if cell.cell_type == "markdown":
            seen.append(cell.source)
        elif code := runnable(cell.source):
            seen.append(shown(code, namespace))
    text = re.sub(r"\s+", " ", "\n".join(seen)).lower()
    leaks = [a for a in answers_of(lesson, exercise) if a in text]
    assert not leaks, f"{eid}: its section shows {leaks} before it is answered"
