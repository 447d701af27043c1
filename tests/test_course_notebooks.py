"""Every lesson notebook run end to end in replay mode (no GPU): in a file of its own, so that the test runner's
two workers run it beside the course's other slow tests rather than after them."""

from __future__ import annotations

import subprocess
import sys
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime

import nbformat
import pytest
from conftest import ROOT, has_gpu

from kernel_lab.course import catalog

LESSONS = catalog.all_lessons()
TESTS = ROOT / "tests"  # zmq_polls, for the notebooks' own Pythons


SLOW_NOTEBOOK_S = 180.0  # a lesson slower than this in replay mode is reported (CI once waited ~10 min in lesson 6)


def slow_cells(nb: nbformat.NotebookNode, over: float = 30.0) -> list[str]:
    """'cell 3: 598 s (%%profile --or-replay …)' for each cell that ran longer than ``over`` seconds."""
    out = []
    for i, cell in enumerate(nb.cells):
        times = cell.get("metadata", {}).get("execution", {})
        start, end = times.get("iopub.status.busy"), times.get("shell.execute_reply")
        if start and end:
            took = (
                datetime.fromisoformat(end.replace("Z", "+00:00")) - datetime.fromisoformat(start.replace("Z", "+00:00"))
            ).total_seconds()
            if took > over:
                out.append(f"cell {i}: {took:.0f} s ({cell.source.splitlines()[0][:60]})")
    return out


RUN_NOTEBOOK = """
import sys, nbformat
from nbclient import NotebookClient
sys.path.insert(0, sys.argv[3])
import zmq_polls
zmq_polls.install()
nb = nbformat.read(sys.argv[1], as_version=4)
try:
    NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": sys.argv[2]}}).execute()
finally:
    nbformat.write(nb, sys.argv[2] + "/executed.ipynb")
"""


@pytest.mark.slow
@pytest.mark.skipif(has_gpu(), reason="replay mode: on a GPU the notebooks profile live (kernel_lab/course/live.py)")
def test_every_lesson_notebook_runs_in_replay_mode(tmp_path):
    # Each notebook runs in its own Python (two at a time): nbclients in threads of one process once waited
    # 10 minutes on CI outside any cell, as if a zmq wake-up was lost between the threads' event loops. It happened
    # in a process of its own too (10_capstone: 611 s, every cell under 30 s by the kernel's clock, 6 s alone): the
    # reply was read when the cell's timeout ran out (tests/zmq_polls.py now looks every second, and the cell
    # timeout is 2 minutes: a replayed cell takes seconds).
    def execute(lesson):
        folder = tmp_path / lesson.id
        folder.mkdir()
        started = time.monotonic()
        subprocess.run(
            [sys.executable, "-c", RUN_NOTEBOOK, str(ROOT / "notebooks" / f"{lesson.id}.ipynb"), str(folder), str(TESTS)],
            check=True,
            timeout=900,
        )
        return lesson, nbformat.read(folder / "executed.ipynb", as_version=4), folder, time.monotonic() - started

    with ThreadPoolExecutor(2) as pool:
        done = list(pool.map(execute, LESSONS))
    for lesson, nb, folder, took in done:
        if took > SLOW_NOTEBOOK_S:
            warnings.warn(f"{lesson.id} took {took:.0f} s in replay mode; slow cells: {slow_cells(nb) or 'none'}", stacklevel=1)
        text = "\n".join(
            o.get("text", "") + o.get("data", {}).get("text/plain", "")
            for c in nb.cells
            if c.cell_type == "code"
            for o in c.outputs
        )
        assert "REPLAYING the recorded report" in text, lesson.id
        assert f"{lesson.id}.fix: UNCHANGED" in text, lesson.id
        assert "Course progress" in text and (folder / f"fix_{lesson.id}.py").exists()
        assert not any(o.output_type == "error" for c in nb.cells if c.cell_type == "code" for o in c.outputs)
