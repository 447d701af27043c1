"""``--rewriter llm`` as an agent, end to end on the CPU: the real openai client over HTTP to a stand-in server on
127.0.0.1 that plays a model with state (its next answer depends on what it was told), Triton's interpreter, the
judge, and the replay profiler over a recorded report. Each test asserts what the model received at each turn and
what the loop chose.

The cell's reference sleeps 40 ms a call, so that which candidate is faster does not depend on a busy CPU: one
without the sleep is far faster, one that sleeps 80 ms far slower (its kernel unchanged: nothing suspicious)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from openai_server import OpenAIServer
from profilers import EveryCell

import kernel_lab
from kernel_lab import samples
from kernel_lab.display.progress import Progress
from kernel_lab.display.versions import version_view
from kernel_lab.frontend import Cell
from kernel_lab.rewrite.agent import directions
from kernel_lab.rewrite.base import RewriteContext
from kernel_lab.rewrite.conversation import answers

CELLS = Path(__file__).resolve().parent / "cells"
REPLAY = samples.report("memory_bound")
KEY = "sk-test-DO-NOT-LEAK-91ab"
HELPER = '''

def check(x, y):
    """The user's own check, which run does not call."""
    return torch.allclose(run(x, y), x + y)
'''
USER = (CELLS / "slow_ref.py").read_text() + HELPER
FAST = USER.replace("    time.sleep(0.04)\n", "")  # the same kernel, without the reference's sleep
SLOWER = USER.replace("time.sleep(0.04)", "time.sleep(0.08)")
BROKEN = FAST.replace("def run(x, y):", "def run(x, y)")
BROKEN_LINE = next(i for i, line in enumerate(BROKEN.splitlines(), 1) if line.startswith("def run(x, y)"))
WRONG = FAST.replace("x + y, mask=mask", "x - y, mask=mask")
CHEAT = FAST.split("\n\ndef run")[0] + "\n\ndef run(x, y):\n    return x + y\n" + HELPER
HARNESS = FAST.replace("N = 20_000", "N = 4_000_000").replace(HELPER, "\n")
Messages = Sequence[Mapping[str, Any]]


def fenced(code: str, why: str = "Dropped the sleep; it addresses memory_bound.") -> str:
    return f"Here it is:\n\n```python\n{code}```\n\n{why}\n"


def turn(messages: Messages) -> int:
    """Which turn the model is asked for (1: its first answer)."""
    return 1 + sum(m["role"] == "assistant" for m in messages)


def last(messages: Messages) -> str:
    return str(messages[-1]["content"])


def optimize(tmp_path: Path, server: OpenAIServer, **options: Any):
    events: list = []
    settings = {"llm_workers": 1, "llm_turns": 2, "screen": 0, "rounds": 1, "replay": REPLAY, **options}
    result = kernel_lab.optimize(
        USER,
        root=tmp_path,
        rewriter="llm",
        model="test-model",
        base_url=server.base_url,
        on_event=events.append,
        **settings,
    )
    return result, events


def told(server: OpenAIServer) -> list[list[Mapping[str, Any]]]:
    return [list(r.body["messages"]) for r in server.requests if r.path.endswith("/chat/completions")]


@pytest.mark.slow
def test_a_cell_that_does_not_compile_is_fixed_after_the_compilers_message_reaches_the_model(tmp_path):
    def model(messages: Messages) -> str:
        if turn(messages) == 1:
            return fenced(BROKEN)
        fixable = "compile_error" in last(messages) and f"at line {BROKEN_LINE}" in last(messages)
        return fenced(FAST) if fixable else "I cannot see what is wrong."

    with OpenAIServer(policy=model) as server:
        result, events = optimize(tmp_path, server)
    first, second = told(server)
    assert first[0]["role"] == "system" and "You work in turns" in first[0]["content"]
    assert f">{BROKEN_LINE:4d}| def run(x, y)" in last(second)  # the candidate's own line, numbered as sent
    broken, fixed = result.session.versions[1:]
    assert broken.failure == "compile_error" and fixed.correct and result.best is fixed
    assert (broken.worker, broken.turn, fixed.turn) == (1, 1, 2)
    said = [e.message for e in events if e.state == "worker"]
    assert any("worker 1, turn 1" in m and "compile_error" in m for m in said)
    progress = Progress()  # what the panel and the terminal show, folded from the events
    for event in events:
        progress.add(event)
    assert progress.rows["v002"][1].startswith("worker 1, turn 2: ") and progress.rows["v002"][2].startswith("correct")
    assert progress.best.startswith("v002")


@pytest.mark.slow
def test_a_wrong_cell_is_fixed_after_the_judges_numbers_reach_the_model(tmp_path):
    def model(messages: Messages) -> str:
        if turn(messages) == 1:
            return fenced(WRONG)
        numbers = re.search(r"wrong_values.*differs from the reference by up to [\d.]+ \(index", last(messages), re.S)
        return fenced(FAST) if numbers else "No idea."

    with OpenAIServer(policy=model) as server:
        result, _ = optimize(tmp_path, server)
    wrong, fixed = result.session.versions[1:]
    assert wrong.failure == "wrong_values" and wrong.reason in last(told(server)[1])
    assert "input set" in wrong.reason  # which input set, where and by how much: the judge's words, in full
    assert fixed.correct and result.best is fixed


@pytest.mark.slow
def test_a_correct_but_slower_cell_is_improved_after_its_profile_reaches_the_model(tmp_path):
    def model(messages: Messages) -> str:
        if turn(messages) == 1:
            return fenced(SLOWER, "Slept longer.")
        profiled = "## Its profile" in last(messages) and "memory_bound" in last(messages)
        return fenced(FAST) if profiled and "slower than the original" in last(messages) else "No idea."

    with OpenAIServer(policy=model) as server:
        result, events = optimize(tmp_path, server)
    assert any(e.state == "worker" and "x on the CPU" in e.message for e in events)
    slower, fast = result.session.versions[1:]
    feedback = last(told(server)[1])
    assert slower.correct and slower.speedup is not None and slower.speedup < 1
    assert "REPLAYED recorded report" in feedback  # the diagnosis is honest about where it came from
    assert "Timed by Triton's CPU interpreter" in feedback  # and so are the times
    assert f"{slower.time_ms:.4g} ms" in feedback and f"{slower.reference_ms:.4g} ms" in feedback
    assert result.best is fast


@pytest.mark.slow
def test_an_answer_that_changes_the_harness_is_judged_with_the_users_and_apply_keeps_it(tmp_path, monkeypatch):
    def model(messages: Messages) -> str:
        return fenced(HARNESS) if turn(messages) == 1 else "Understood."

    with OpenAIServer(policy=model) as server:
        result, _ = optimize(tmp_path, server)
    sent = []  # what the panel's Apply asks the JupyterLab extension to put in the cell

    def set_cell(cell_id, text, expected, done):
        sent.append(text)
        done({"ok": True})

    monkeypatch.setattr("kernel_lab.results.optimize.set_cell", set_cell)
    result.cell = Cell("cell-1", "%%optimize --rewriter llm\n" + USER)
    result.replace_cell(on_done=lambda reply: None)
    assert "N = 20_000" in sent[0] and "def check(x, y):" in sent[0] and "N = 4_000_000" not in sent[0]
    made = result.session.versions[1]
    assert "N = 20_000" in made.source and "def check(x, y):" in made.source and "time.sleep" not in made.source
    feedback = last(told(server)[1])
    assert "changed `N` and dropped `check`" in feedback and "harness is the user's" in feedback
    assert result.best is made
    assert "N = 20_000" in result.apply() and "N = 4_000_000" not in result.apply()


@pytest.mark.slow
def test_an_answer_without_code_is_asked_again_and_counts_as_a_turn(tmp_path):
    def model(messages: Messages) -> str:
        return "I would make it faster." if turn(messages) == 1 else fenced(FAST)

    with OpenAIServer(policy=model) as server:
        result, _ = optimize(tmp_path, server)
    assert "held no usable code" in last(told(server)[1]) and len(told(server)) == 2
    assert len(result.session.versions) == 2 and result.best is result.session.versions[1]
    assert result.spent is not None and result.spent.requests == 2


@pytest.mark.slow
def test_a_cheating_answer_is_flagged_the_model_told_and_the_version_not_chosen(tmp_path):
    def model(messages: Messages) -> str:
        return fenced(CHEAT) if turn(messages) == 1 else "I see."

    with OpenAIServer(policy=model) as server:
        result, _ = optimize(tmp_path, server)
    cheat = result.session.versions[1]
    assert cheat.correct and cheat.warnings and result.best is result.session.original
    feedback = last(told(server)[1])
    assert "## Warnings (they block it)" in feedback and cheat.warning_kinds[0] in feedback


@pytest.mark.slow
def test_three_workers_start_from_distinct_directions_and_the_budget_stops_them_and_is_reported(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)  # sent to the server: never in a transcript

    def model(messages: Messages) -> str:
        if "Launch configurations only" in str(messages[1]["content"]):
            return '```json\n[{"kernel": "add_kernel", "BLOCK": 256}]\n```'
        return fenced(FAST) if turn(messages) == 1 else fenced(SLOWER, "Slept longer.")

    with OpenAIServer(policy=model) as server:
        result, events = optimize(tmp_path, server, llm_workers=3, llm_turns=3, llm_requests=4, price_in=1.0, price_out=2.0)
    firsts = [m[1]["content"] for m in told(server) if len(m) == 2]
    assert len(firsts) == 3 and len({f.split("## Your direction")[1] for f in firsts}) == 3
    assert sum("Launch configurations only" in f for f in firsts) == 1
    systems = {m[0]["content"] for m in told(server)}
    assert len(systems) == 2 and any("You do not write code" in s for s in systems)  # the launch worker's own rules
    assert len(told(server)) == 4  # the budget's four requests, no more
    spent = result.spent
    assert spent is not None and spent.requests == 4 and spent.prompt > 0 and spent.cost is not None
    assert "4 requests asked" in spent.stopped and "4 requests" in str(result) and "4 requests" in result._repr_html_()
    fast = [v for v in result.session.versions if "time.sleep" not in v.source]
    assert len(fast) == 1  # two workers answered the same cell: it was judged once, the other told so
    assert sum("not judged again" in e.message for e in events if e.state == "worker") == 1
    launch = [v for v in result.session.versions if "launch configuration" in v.explanation]
    assert launch and "BLOCK=256" in launch[0].source
    assert all(r.headers["authorization"] == f"Bearer {KEY}" for r in server.requests)
    shown = version_view(result, launch[0].number)  # the panel's view of a version: its conversation, folded
    assert "What the model was told, what it said: worker" in shown and "Launch configurations only" in shown
    for v in result.session.versions[1:]:
        kept = json.loads((result.session.folder(v) / "transcript.json").read_text())
        assert kept["turns"][-1]["version"] == v.label and KEY not in json.dumps(kept)
        asked = kept["messages"][: kept["turns"][-1]["answer"]]  # what the model was asked for this version's answer
        assert asked in told(server) and answers(kept)[-1] == model(asked)  # the answer it got, as the model gave it


@pytest.mark.slow
def test_the_launch_workers_configurations_are_screened_and_only_the_fastest_judged(tmp_path):
    def model(messages: Messages) -> str:
        if "Launch configurations only" not in str(messages[1]["content"]):
            return "No code from me."  # the other worker: two turns without code, then it stops
        return '```json\n[{"kernel": "add_kernel", "BLOCK": 128}, {"kernel": "add_kernel", "BLOCK": 4096}]\n```'

    with OpenAIServer(policy=model) as server:
        result, _ = optimize(tmp_path, server, llm_workers=2, llm_turns=2, screen=8)
    launch = [m for m in told(server) if "Launch configurations only" in str(m[1]["content"]) and len(m) > 2]
    screened = last(launch[0])
    assert "## The screen's quick times" in screened and '{"BLOCK": 128}' in screened and '{"BLOCK": 4096}' in screened
    made = [v for v in result.session.versions[1:] if "launch configuration" in v.explanation]
    assert len(made) == 2  # one judged a turn: the screen's fastest, never both, and never one judged before
    assert all(("BLOCK=128" in v.source) != ("BLOCK=4096" in v.source) for v in made) and made[0].source != made[1].source


@pytest.mark.slow
def test_a_version_profiled_when_judged_is_not_profiled_again_for_the_next_round(tmp_path):
    def model(messages: Messages) -> str:
        return fenced(FAST) if "time.sleep(0.04)" in str(messages[1]["content"]) else "Nothing more."

    profiler = EveryCell(REPLAY, live=True)
    with OpenAIServer(policy=model) as server:
        result, events = optimize(tmp_path, server, rounds=2, llm_turns=1, profiler=profiler, replay=None)
    fast = result.session.versions[1]
    assert result.best is fast and len(result.session.versions) == 2
    assert profiler.cells == [USER, fast.source]  # v000 for round 1; v001 when judged, and not again for round 2
    assert any("v001 was profiled when it was judged" in e.message for e in events if e.round == 2)
    second = [m for m in told(server) if "time.sleep(0.04)" not in str(m[1]["content"])]
    assert second and "memory_bound" in str(second[0][1]["content"])  # round 2 started from v001's own diagnosis


def test_directions_name_the_top_bottlenecks_then_launch_configurations():
    ranked = [{"kind": "memory_bound", "score": 0.8, "hint": "move fewer bytes"}, {"kind": "low_occupancy", "score": 0.1}]
    found = directions(RewriteContext(source=USER, bottlenecks=ranked), 3)
    assert [d.name for d in found] == ["memory_bound", "low_occupancy", "launch configurations"]
    assert "move fewer bytes" in found[0].text and found[2].launch and "add_kernel" in found[2].text
