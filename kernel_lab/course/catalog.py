"""The lessons on disk: ``lessons/<NN_name>/lesson.py`` (a :class:`~kernel_lab.course.model.Lesson`), the
cells ``<version>.py`` and their recorded reports ``<version>.ncu-rep``."""

from __future__ import annotations

import importlib.util
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kernel_lab.course.model import Diagnose, Estimate, Fix, Lesson

if TYPE_CHECKING:
    from kernel_lab.results.profile import Result

LESSONS_DIR = Path(__file__).resolve().parent / "lessons"
Exercise = Diagnose | Estimate | Fix


@cache
def _load(folder: Path) -> Lesson:
    spec = importlib.util.spec_from_file_location(f"kernel_lab_course_{folder.name}", folder / "lesson.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    lesson = module.LESSON
    if lesson.id != folder.name:
        raise ValueError(f"{folder}/lesson.py declares id {lesson.id!r}")
    return lesson


def all_lessons() -> tuple[Lesson, ...]:
    """Every lesson, in order."""
    folders = sorted(p for p in LESSONS_DIR.iterdir() if p.is_dir() and p.name[:2].isdigit() and (p / "lesson.py").exists())
    return tuple(_load(p) for p in folders)


def lesson(which: str | int) -> Lesson:
    """A lesson by id ("02_coalescing"), number (2) or number string ("02")."""
    for candidate in all_lessons():
        if which in (candidate.id, candidate.number) or (isinstance(which, str) and which.lstrip("0") == str(candidate.number)):
            return candidate
    raise KeyError(f"No lesson {which!r}; lessons: {', '.join(x.id for x in all_lessons())}")


def folder(which: str | int | Lesson) -> Path:
    return LESSONS_DIR / (which.id if isinstance(which, Lesson) else lesson(which).id)


def cell_path(which: str | int | Lesson, name: str) -> Path:
    """The file of version ``name`` of a lesson (its cell)."""
    the_lesson = which if isinstance(which, Lesson) else lesson(which)
    the_lesson.version(name)  # raises for unknown names
    return folder(the_lesson) / f"{name}.py"


def cell(which: str | int | Lesson, name: str) -> str:
    """The source of version ``name`` of a lesson, as the notebook shows it."""
    return cell_path(which, name).read_text()


def report(which: str | int | Lesson, name: str) -> Path:
    """The report of version ``name`` of a lesson, recorded on an H100 (see kernel_lab/course/README.md)."""
    the_lesson = which if isinstance(which, Lesson) else lesson(which)
    version = the_lesson.version(name)
    if not version.recorded:
        raise KeyError(f"Version {name!r} of lesson {the_lesson.id} is a {version.role} version: it was never recorded.")
    return folder(the_lesson) / f"{name}.ncu-rep"


@cache
def diagnosis(lesson_id: str, name: str) -> Result:
    """The recorded report of a version, diagnosed by the conductor (cached)."""
    from kernel_lab.api import diagnose

    return diagnose(report(lesson_id, name))


def exercise(exercise_id: str) -> tuple[Lesson, Any]:
    """(lesson, exercise) of an id like "02_coalescing.fix" (or "2.fix")."""
    lesson_part, _, name = exercise_id.partition(".")
    if not name:
        raise KeyError(f"Exercise ids look like '02_coalescing.fix', not {exercise_id!r}.")
    the_lesson = lesson(lesson_part)
    return the_lesson, the_lesson.exercise(name)


def exercise_ids() -> list[str]:
    return [f"{x.id}.{e.id}" for x in all_lessons() for e in x.exercises]
