"""Optimizing a suite of cells with Ray, for real, on a local Ray instance that declares two (fake) GPUs:
cells judged on Triton's CPU interpreter from a recorded diagnosis (replay), each measurement a task holding
one GPU; a worker killed mid-task, a suite resumed, the same verdicts on one GPU as on two."""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import shutil
import signal
from collections import defaultdict
from pathlib import Path

import pytest

from kernel_lab import samples
from kernel_lab.suite import MEASUREMENTS, optimize_suite

pytestmark = pytest.mark.slow  # Ray, its workers and the judge's sandboxes

ray = pytest.importorskip("ray")
CELLS = Path(__file__).parent / "cells"
REPLAY = samples.report("memory_bound")
OPTIONS = {"rounds": 1, "candidates": 1}
#: a cell whose make_inputs kills the process that runs its judgement (a Ray worker), the first time only
KILLER = """
import os, signal
FLAG = {flag!r}
_make = make_inputs


def judge_pid():  # the process that judges: this sandbox's parent, or the parent of the zygote it was forked from
    pid = os.getppid()
    if b"kernel_lab.verify.zygote" in open(f"/proc/{{pid}}/cmdline", "rb").read():
        pid = int(open(f"/proc/{{pid}}/stat").read().rsplit(")", 1)[1].split()[1])
    return pid


def make_inputs(*args):
    if not os.path.exists(FLAG):
        open(FLAG, "w").close()
        os.kill(judge_pid(), signal.SIGKILL)  # the judge task's worker: Ray runs the task again elsewhere
    return _make(*args)
"""


def start(gpus: int) -> None:
    """A local Ray instance declaring ``gpus`` (fake) GPUs. Ray waits 30 s for its node to register (a constant in
    its code) and a busy machine can take longer: then the processes that start made are ended and it starts again."""
    if ray.is_initialized():
        ray.shutdown()
    for tries in range(1, 4):
        before = _descendants()
        try:
            ray.init(num_cpus=2, num_gpus=gpus, include_dashboard=False, log_to_driver=False)
            return
        except Exception as exc:
            if "timed out during startup" not in str(exc) or tries == 3:
                raise
            for pid in _descendants() - before:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)


def _descendants() -> set[int]:
    """The ids of this process's children, theirs, and so on (from /proc)."""
    parents: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError):
            parents[int(stat.parent.name)] = int(stat.read_text().rsplit(")", 1)[1].split()[1])
    found, todo = set(), [os.getpid()]
    while todo:
        of = todo.pop()
        children = [pid for pid, parent in parents.items() if parent == of]
        found.update(children)
        todo += children
    return found


@pytest.fixture(scope="module")
def suite(tmp_path_factory):
    folder = tmp_path_factory.mktemp("suite")
    for name in ("add_ref", "relu6_ref"):
        shutil.copy(CELLS / f"{name}.py", folder / f"{name}.py")
    flag = tmp_path_factory.mktemp("flag") / "killed"
    (folder / "sized_killer.py").write_text((CELLS / "sized_add_ref.py").read_text() + KILLER.format(flag=str(flag)))
    start(2)
    report = optimize_suite(folder, replay=REPLAY, root=str(tmp_path_factory.mktemp("root")), **OPTIONS)
    yield folder, report, flag
    ray.shutdown()


def test_every_cell_is_optimized_and_reported(suite):
    _, report, _ = suite
    assert [(c.cell, c.status) for c in report.cells] == [("add_ref", "done"), ("relu6_ref", "done"), ("sized_killer", "done")]
    for c in report.cells:
        assert Path(c.session).is_dir() and c.original_ms and c.speedup and c.gpus and set(c.gpus) <= {"0", "1"}
    data = json.loads(report.to_json())
    assert [c["cell"] for c in data["cells"]] == ["add_ref", "relu6_ref", "sized_killer"]
    assert "speedup" in str(report) and "<table>" in report._repr_html_()


def test_a_measurement_holds_its_gpu_alone(suite):
    _, report, _ = suite
    spans = defaultdict(list)
    for line in (report.folder / MEASUREMENTS).read_text().splitlines():
        m = json.loads(line)
        assert len(m["gpus"]) == 1
        spans[m["gpus"][0]].append((m["start"], m["end"]))
    assert set(spans) == {"0", "1"}  # both GPUs were used
    for intervals in spans.values():
        intervals.sort()
        assert all(a_end <= b_start for (_, a_end), (b_start, _) in itertools.pairwise(intervals))


def test_a_killed_worker_costs_only_its_task(suite):
    _, report, flag = suite
    killer = next(c for c in report.cells if c.cell == "sized_killer")
    assert flag.exists() and killer.status == "done" and killer.error is None


def test_a_suite_run_again_resumes_where_it_stopped(suite):
    folder, report, _ = suite
    sessions = sorted(p.name for p in (report.folder / "sessions").iterdir())
    again = optimize_suite(folder, replay=REPLAY, folder=report.folder, **OPTIONS)
    assert [c.status for c in again.cells] == ["done"] * 3 and "Resumed: 3 cell(s)" in again.notes[-1]
    assert sorted(p.name for p in (report.folder / "sessions").iterdir()) == sessions  # nothing ran again


AGAIN = ("add_ref", "relu6_ref")


def test_the_verdicts_do_not_depend_on_how_many_gpus(suite, tmp_path):
    """Two of the suite's cells again on one GPU (the third, the killer, no longer kills: an add like the first)."""
    folder, report, _ = suite
    again = tmp_path / "cells"
    again.mkdir()
    for name in AGAIN:
        shutil.copy(folder / f"{name}.py", again / f"{name}.py")
    start(1)
    one = optimize_suite(again, replay=REPLAY, folder=tmp_path / "one", **OPTIONS)  # Ray stays so: the others need a GPU

    def verdicts(r):
        from kernel_lab.session import Session

        return {c.cell: [v.correct for v in Session.open(c.session).versions] for c in r.cells if c.cell in AGAIN}

    assert verdicts(one) == verdicts(report)
    assert len(one.cells) == 2 and {g for c in one.cells for g in c.gpus} == {"0"}
