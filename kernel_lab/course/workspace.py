"""The course on a copy: ``course.start(folder)`` copies the lesson notebooks and their figures into a work
folder, unpaired from ``tutorials/``, so that nothing a student does there (saves, a changed kernel, fix
files, progress) changes the checkout. A lesson already in the folder is kept: it holds the student's work."""

from __future__ import annotations

import html
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nbformat

from kernel_lab.course import catalog
from kernel_lab.display.html import boxed
from kernel_lab.errors import KernelLabError

ROOT = Path(__file__).resolve().parents[2]  # the checkout: notebooks/ and tutorials/ beside the package
DEFAULT = Path("~/kernel-lab-course")
FIGURES = "../tutorials/figures/"  # how the shipped notebooks link their figures


@dataclass(frozen=True)
class Workspace:
    """Where the course was copied, and which lessons were copied now or kept from before."""

    folder: Path
    copied: tuple[str, ...]
    kept: tuple[str, ...]

    @property
    def first(self) -> Path:
        return self.folder / f"{catalog.all_lessons()[0].id}.ipynb"

    def _lines(self) -> list[str]:
        copied = f"copied {len(self.copied)} lesson{'s' if len(self.copied) != 1 else ''} there" if self.copied else ""
        kept = f"kept {len(self.kept)} as you left them (delete a notebook to get a fresh copy)" if self.kept else ""
        lines = [f"The course is in {self.folder}: {' and '.join(t for t in (copied, kept) if t)}."]
        lines.append(f"Open it: jupyter lab {self.first}. Your answers, fixes and progress stay in that folder.")
        return lines

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(str(self))

    def __str__(self) -> str:
        return "\n".join(self._lines())

    @boxed
    def _repr_html_(self) -> str:
        return "".join(f"<p>{html.escape(line)}</p>" for line in self._lines())


def _unpaired(source: Path) -> nbformat.NotebookNode:
    """The shipped notebook without its jupytext pairing, its figures linked beside it."""
    nb = nbformat.read(source, as_version=4)
    nb.metadata.pop("jupytext", None)
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cell.source = cell.source.replace(FIGURES, "figures/")
    return nb


def start(folder: str | Path = DEFAULT) -> Workspace:
    """Copy the ten lesson notebooks (and their figures) into ``folder`` and say where; open them there.

    The copies are not paired with ``tutorials/``, so saving one never writes the checkout; a lesson
    already in ``folder`` is kept as it is."""
    target = Path(folder).expanduser().resolve()
    shipped = ROOT / "notebooks"
    if not shipped.is_dir():
        raise KernelLabError(
            f"The lesson notebooks are not here ({shipped} is missing): they ship with a checkout, not with the wheel.",
            fix="Clone Kernel Lab's repository and install it with `pip install -e .`, then call course.start() again.",
        )
    if target.exists() and not target.is_dir():
        raise KernelLabError(f"{target} is a file, not a folder.", fix="Give course.start() a folder to copy the course into.")
    if target == shipped or target.is_relative_to(ROOT / "tutorials"):
        raise KernelLabError(f"{target} is the checkout's own lessons.", fix="Give course.start() a folder outside them.")
    target.mkdir(parents=True, exist_ok=True)
    copied, kept = [], []
    for lesson in catalog.all_lessons():
        name = f"{lesson.id}.ipynb"
        if (target / name).exists():
            kept.append(lesson.id)
            continue
        nbformat.write(_unpaired(shipped / name), target / name)
        copied.append(lesson.id)
    shutil.copytree(ROOT / "tutorials" / "figures", target / "figures", dirs_exist_ok=True)
    return Workspace(target, tuple(copied), tuple(kept))
