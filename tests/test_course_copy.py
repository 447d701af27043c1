"""The course works on a copy (issue #43): ``course.start(folder)`` copies the lessons there, unpaired from
``tutorials/``, and nothing a student does in the copy (a jupytext save with answers, another kernel, a fix
file, progress) changes the checkout."""

from __future__ import annotations

import subprocess
import sys

import nbformat
import pytest
from conftest import ROOT
from IPython.core.interactiveshell import InteractiveShell
from jupytext import TextFileContentsManager

from kernel_lab import course
from kernel_lab.course import catalog, workspace
from kernel_lab.errors import KernelLabError

LESSONS = catalog.all_lessons()


def checkout_status() -> str:
    return subprocess.run(
        ["git", "status", "--porcelain", "--", "tutorials", "notebooks"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout


def test_start_copies_every_lesson_unpaired_with_its_figures(tmp_path):
    where = course.start(tmp_path / "course")
    assert where.copied == tuple(x.id for x in LESSONS) and not where.kept
    assert str(where.first) in str(where) and "jupyter lab" in str(where)
    for lesson in LESSONS:
        nb = nbformat.read(where.folder / f"{lesson.id}.ipynb", as_version=4)
        shipped = nbformat.read(ROOT / "notebooks" / f"{lesson.id}.ipynb", as_version=4)
        assert "jupytext" not in nb.metadata and len(nb.cells) == len(shipped.cells)
        for cell in nb.cells:
            for figure in (p.split(")")[0] for p in cell.source.split("](")[1:] if cell.cell_type == "markdown"):
                if figure.endswith(".svg"):
                    assert (where.folder / figure).exists(), f"{lesson.id}: {figure}"


def test_a_second_start_keeps_the_students_work(tmp_path):
    course.start(tmp_path)
    mine = tmp_path / "02_coalescing.ipynb"
    mine.write_text(mine.read_text().replace('kind=\\"\\", line=\\"\\"', 'kind=\\"uncoalesced_global\\", line=\\"\\"'))
    again = course.start(tmp_path)
    assert again.kept == tuple(x.id for x in LESSONS) and not again.copied and "kept 10 as you left them" in str(again)
    assert "uncoalesced_global" in mine.read_text()


def test_lesson_steps_in_the_copy_leave_the_checkout_unchanged(tmp_path, monkeypatch):
    before = checkout_status()
    folder = course.start(tmp_path / "course").folder
    monkeypatch.chdir(folder)
    monkeypatch.delenv("KERNEL_LAB_COURSE_PROGRESS", raising=False)
    # Jupyter with jupytext saves the notebook with an answer filled in and another kernel chosen
    contents = TextFileContentsManager(root_dir=str(folder))
    nb = contents.get("01_roofline.ipynb")["content"]
    answer = next(c for c in nb.cells if c.source.startswith('course.answer("01_roofline.axpy"'))
    answer.source = 'course.answer("01_roofline.axpy", kind="memory_bound", metric="dram_pct")'
    nb.metadata["kernelspec"] = {"name": "my-env", "display_name": "My env", "language": "python"}
    contents.save({"type": "notebook", "content": nb}, "01_roofline.ipynb")
    # the cells run: the answer is graded, the fix cell writes its file
    InteractiveShell.clear_instance()
    shell = InteractiveShell.instance()
    first = next(c.source for c in nb.cells if c.cell_type == "code")  # %load_ext kernel_lab, import course
    assert shell.run_cell(first).success and shell.run_cell(answer.source).success
    fix = next(c.source for c in nb.cells if c.source.startswith("%%writefile fix_01_roofline.py"))
    assert shell.run_cell(fix).success
    InteractiveShell.clear_instance()
    assert (folder / "fix_01_roofline.py").exists() and (folder / ".kernel_lab" / "course" / "progress.json").exists()
    assert "my-env" in (folder / "01_roofline.ipynb").read_text()
    assert not list(folder.rglob("*.md")) and checkout_status() == before


def test_the_checkout_itself_is_refused_and_a_file_too(tmp_path):
    with pytest.raises(KernelLabError, match="checkout's own lessons"):
        course.start(ROOT / "notebooks")
    (tmp_path / "a_file").write_text("")
    with pytest.raises(KernelLabError, match="is a file, not a folder"):
        course.start(tmp_path / "a_file")


def test_without_the_notebooks_start_says_where_they_ship(tmp_path, monkeypatch):
    monkeypatch.setattr(workspace, "ROOT", tmp_path)
    with pytest.raises(KernelLabError, match="ship with a checkout, not with the wheel") as err:
        course.start(tmp_path / "course")
    assert "\n" not in str(err.value)


@pytest.mark.slow
def test_the_command_line_copies_and_says_where(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "kernel_lab.course", str(tmp_path / "c")], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0 and f"The course is in {tmp_path / 'c'}" in done.stdout
    bad = subprocess.run(
        [sys.executable, "-m", "kernel_lab.course", str(ROOT / "notebooks")], capture_output=True, text=True, check=False
    )
    assert bad.returncode == 1 and bad.stderr.count("\n") == 1 and "Traceback" not in bad.stderr
