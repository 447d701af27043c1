"""The user's harness is the user's: an answer may change the kernels, run and its helpers, never make_inputs,
SHAPES, their constants or the functions run does not call; Apply puts the user's harness back into the cell."""

from __future__ import annotations

from pathlib import Path

import pytest

import kernel_lab
from kernel_lab import samples
from kernel_lab.rewrite.base import Candidate
from kernel_lab.rewrite.harness import harness_names, keep_harness

CELLS = Path(__file__).resolve().parent / "cells"
HELPER = '''

def reference(x):
    """The user's own check, which run does not call."""
    return torch.softmax(x, dim=-1)
'''
USER = (CELLS / "softmax_ref.py").read_text() + HELPER
CHANGED = (
    USER.replace("rows=16, cols=64", "rows=8192, cols=4096")
    .replace("(3, 100)]", "(3, 100), (1, 1)]")
    .replace(HELPER, "\n")
    .replace("BLOCK=triton.next_power_of_2(x.shape[1])", "BLOCK=max(16, triton.next_power_of_2(x.shape[1]))")
)


def test_the_harness_is_make_inputs_shapes_their_constants_and_what_run_does_not_call():
    assert harness_names(USER) == ["DEVICE", "SHAPES", "make_inputs", "reference"]
    with_helper = (
        USER.replace("out = torch.empty_like(x)", "out = _out(x)") + "\n\ndef _out(x):\n    return torch.empty_like(x)\n"
    )
    assert "_out" not in harness_names(with_helper)  # run calls it: the rewrite's to change


def test_an_answer_that_changed_the_harness_gets_the_users_back_and_keeps_its_own_kernel_change():
    kept = keep_harness(USER, CHANGED)
    assert kept.changed == ("SHAPES", "make_inputs") and kept.dropped == ("reference",)
    assert "rows=16, cols=64" in kept.source and "(1, 1)" not in kept.source and HELPER.strip() in kept.source
    assert "BLOCK=max(16," in kept.source  # the change to run stays
    assert "`make_inputs`" in kept.text() and "`reference`" in kept.text()
    compile(kept.source, "kept", "exec")


def test_an_answer_that_left_the_harness_alone_or_does_not_parse_is_unchanged():
    same = USER.replace("BLOCK=triton", "BLOCK=2 * triton")
    assert keep_harness(USER, same).source == same and keep_harness(USER, same).text() == ""
    broken = CHANGED.replace("def run(x):", "def run(x)")
    assert keep_harness(USER, broken).source == broken  # the judge says it does not compile


class ChangesTheHarness:
    """A rewriter (the plug-in protocol) whose answer also rewrites make_inputs and drops the user's helper."""

    name = "harness-changer"
    cannot_fix = frozenset()

    def propose(self, context, n=1):
        return [Candidate(CHANGED, "larger blocks", "memory_bound", "harness-changer")]


@pytest.mark.slow
def test_apply_keeps_the_users_make_inputs(tmp_path):
    events = []
    result = kernel_lab.optimize(
        USER,
        rounds=1,
        candidates=1,
        root=tmp_path,
        replay=samples.report("memory_bound"),
        rewriter=ChangesTheHarness(),
        on_event=events.append,
    )
    made = result.session.versions[1]
    assert "rows=16, cols=64" in made.source and "def reference" in made.source and "BLOCK=max(16," in made.source
    assert any("keeps your SHAPES, make_inputs, reference" in e.message for e in events)
    assert made.correct, made.reason
    applied = result.apply(1)
    assert "rows=16, cols=64" in applied and "rows=8192" not in applied
