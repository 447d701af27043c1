"""What a terminal 100 columns wide shows: ``kernel-lab diagnose`` and the ``%%optimize`` summary in lines that fit,
broken between words, and a status line the terminal can rewrite in place."""

from __future__ import annotations

import io
import os

import pytest
from conftest import run_python

from kernel_lab import api, samples
from kernel_lab.display.text import WIDTH, wrap
from kernel_lab.results.optimize import OptimizeResult
from kernel_lab.session import Session


def words(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.slow
@pytest.mark.parametrize("name", ["tensor_cores_unused", "uncoalesced_global", "bf16_gemm"])
def test_diagnose_fits_100_columns_and_breaks_only_between_words(name):
    proc = run_python("-m", "kernel_lab.cli", "diagnose", str(samples.report(name)), env={"COLUMNS": "100"})
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert max(map(len, lines)) <= WIDTH, [line for line in lines if len(line) > WIDTH]
    out = words(proc.stdout)
    for d in api.diagnose(samples.report(name)).diagnoses:
        for b in d.bottlenecks:
            assert words(b.hint) in out  # rejoined at the breaks it is the hint: no word was cut (nor at a hyphen)
            for s in b.source_lines:
                assert words(s.text) in out  # the source line, whole
            for r in b.ncu_rules:
                assert words(r.title or r.message[:60]) in out


def test_a_word_longer_than_a_line_is_left_whole():
    path = "/a/very/long/path/" + "x" * 120 + ".ncu-rep"
    assert wrap(f"report {path} loaded", "  ") == ["  report", f"  {path}", "  loaded"]


def test_diagnose_says_where_each_kernel_stands_on_the_roofline():
    text = str(api.diagnose(samples.report("tensor_cores_unused")))
    r = api.diagnose(samples.report("tensor_cores_unused")).rooflines[0]
    assert f"  Roofline: FP32 work, {r.label()}." in text and "(FLOPs executed)" in text


@pytest.fixture
def session(tmp_path):
    s = Session.create(tmp_path, "add", "def run(x):\n    return x + 1\n")
    explanation = "add_kernel: BLOCK 1024 → 8192, num_warps 4 → 2: 5.483 ms against 55.018 ms in the screen; " * 2
    s.add("def run(x):\n    return x + 1  # faster\n", origin="llm:some-model-with-a-long-name", parent=0, correct=True,
          speedup=3.1, significant=True, explanation=explanation)  # fmt: skip
    s.add("def run(x):\n    return x + 2\n", origin="search", parent=0, correct=False, reason="wrong on 3 of 6 input sets")
    return s


def test_the_versions_table_fits_100_columns(session):
    text = str(OptimizeResult(session, "ran 1 round(s)", ("Replay mode: the diagnosis comes from a recorded report.",)))
    before_diff = text.split("\n--- v000")[0].splitlines()  # the diff's own lines are the sources', unchanged
    # lines break between words: a single word (the session's path) longer than the terminal stays whole
    assert all(len(line) <= WIDTH or " " not in line.strip() for line in before_diff), before_diff
    (head,) = [line.split() for line in before_diff if line.startswith("version ")]
    assert head[:2] == ["version", "time_ms"] and "correct" in head and "top_bottleneck" in head
    assert any(line.startswith("v002") and " no " in line for line in before_diff)
    assert "    search: wrong on 3 of 6 input sets" in before_diff  # origin and note under the version's row
    assert "llm:some-model-with-a-long-name: add_kernel: BLOCK 1024" in words(text)


def test_the_status_line_is_no_wider_than_the_terminal(monkeypatch):
    from kernel_lab import cli
    from kernel_lab.loop import Event

    err = io.StringIO()
    monkeypatch.setattr(cli.sys, "stderr", err)
    monkeypatch.setattr(cli.shutil, "get_terminal_size", lambda: os.terminal_size((100, 30)))
    events = cli._Events()
    events.live = True
    for i in range(12):
        events(Event(f"round 1: v{i:03d} proposed: try BLOCK {2**i}", round=1, version=f"v{i:03d}", state="proposed"))
    status = err.getvalue().split("\n")[-1]  # the line the terminal rewrites in place
    assert status.endswith("\r") and len(status.removeprefix("\033[K").removesuffix("\r")) <= 99
