"""Versions on disk: nothing is lost, the best verified one is found again after a restart."""

from __future__ import annotations

import pytest

from kernel_lab.errors import KernelLabError
from kernel_lab.session import Session


def test_versions_are_kept_and_reopened(tmp_path):
    s = Session.create(tmp_path, "add", "v0 source")
    slow = s.add("v1 source", origin="search", parent=0, correct=True, speedup=1.01, significant=False)
    fast = s.add("v2 source", origin="search", parent=0, correct=True, speedup=1.8, significant=True)
    s.add("v3 source", origin="llm:m", parent=0, correct=False, reason="wrong: max error 3.2")
    assert s.best() is fast and s.best() is not slow
    again = Session.open(s.path)
    assert [v.source for v in again.versions] == ["v0 source", "v1 source", "v2 source", "v3 source"]
    assert again.best().number == 2 and again.restore(0) == "v0 source"
    table = again.table()
    assert list(table.version) == ["v000", "v001", "v002", "v003"]
    assert list(table.correct) == ["reference", "yes", "yes", "no"]
    assert "wrong: max error" in table.note[3]


def test_each_row_is_timed_in_one_run_and_the_originals_spread_is_said(tmp_path):
    s = Session.create(tmp_path, "x", "original")
    s.original.time_ms = 31.8
    s.add("a", origin="search", correct=True, time_ms=20.0, spread_ms=0.5, reference_ms=31.8, speedup=1.59, significant=True)
    s.add("b", origin="search", correct=True, time_ms=38.1, spread_ms=2.0, reference_ms=46.9, speedup=1.23, significant=True)
    table = Session.open(s.path).table()
    assert list(table.original_ms[1:]) == [31.8, 46.9] and list(table.iqr_ms[1:]) == [0.5, 2.0]
    assert table.original_ms[2] / table.time_ms[2] == pytest.approx(table.speedup[2], rel=0.01)
    assert "timed beside each version: 31.8–46.9 ms (47% apart)" in table.note[0]


def test_among_versions_the_judge_cannot_tell_apart_the_screens_fastest_is_the_best_and_says_why(tmp_path):
    s = Session.create(tmp_path, "x", "original")
    timed = {"origin": "search", "correct": True, "significant": True, "reference_ms": 0.26}
    judged = s.add("a", **timed, time_ms=0.112, spread_ms=0.015, speedup=2.32, screen_ms=0.127)  # the judge's fastest
    screened = s.add("b", **timed, time_ms=0.121, spread_ms=0.018, speedup=2.15, screen_ms=0.115)  # the screen's
    assert s.best() is screened and judged.speedup > screened.speedup  # 8% apart, spreads 13% and 15%: tied
    assert Session.open(s.path).best().number == screened.number
    said = s.why_best()
    assert said is not None and "v002 is the best version" in said and "v001" in said and "0.115 ms against 0.127 ms" in said
    from html import escape

    from kernel_lab.display.versions import header, text
    from kernel_lab.results.optimize import OptimizeResult

    shown = OptimizeResult(s, "search: v002 runs within 2% of the fastest launch configuration screened")
    in_terminal = " ".join(text(shown).split())  # its lines broken between words at 100 columns
    assert said in in_terminal and "Best: v002, 2.15x faster" in in_terminal and escape(said) in header(shown)
    s.act("reject", 2)  # the user says no: the judge's fastest is the best again, and nothing explains a tie
    assert s.best() is judged and s.why_best() is None and "is the best version" not in text(shown)
    s.add("c", **timed, time_ms=0.080, spread_ms=0.004, speedup=3.25, screen_ms=0.130)  # clearly faster by the judge
    assert s.best().number == 3 and s.why_best() is None
    other = Session.create(tmp_path, "y", "original")
    other.add("a", **timed, time_ms=0.112, spread_ms=0.015, speedup=2.32, screen_ms=0.127)
    other.add("llm's", **timed, time_ms=0.121, spread_ms=0.018, speedup=2.15)  # not screened: the judge's order stands
    assert other.best().number == 1 and other.why_best() is None


def test_no_faster_version_keeps_the_original(tmp_path):
    s = Session.create(tmp_path, "x", "original")
    s.add("slower", origin="search", correct=True, speedup=0.7, significant=True)
    assert s.best() is s.original


def test_restore_of_a_missing_version_says_which_exist(tmp_path):
    s = Session.create(tmp_path, "x", "original")
    with pytest.raises(KernelLabError, match="Versions are 0 to 0"):
        s.restore(3)


def test_two_sessions_never_share_a_folder(tmp_path):
    a = Session.create(tmp_path, "same", "a")
    b = Session.create(tmp_path, "same", "b")
    assert a.path != b.path and (a.path / "v000" / "cell.py").read_text() == "a"


def test_apply_reject_and_undo_are_logged_and_survive_a_reopen(tmp_path):
    s = Session.create(tmp_path, "x", "original")
    s.add("fast", origin="search", correct=True, speedup=2.0, significant=True)
    s.add("faster", origin="search", correct=True, speedup=3.0, significant=True)
    assert s.best().number == 2 and s.actions() == []
    s.act("reject", 2)
    assert s.best().number == 1 and "(rejected)" in s.table().correct[2]
    s.act("apply", 1)
    assert [(a["action"], a["version"]) for a in Session.open(s.path).actions()] == [("reject", 2), ("apply", 1)]
    undone = s.undo()
    assert (undone["action"], undone["version"]) == ("apply", 1)
    assert [a["action"] for a in s.actions()] == ["reject"] and s.rejected == {2}
    assert s.undo()["action"] == "reject" and s.best().number == 2
    assert s.undo() is None  # nothing left to take back
    with pytest.raises(KernelLabError, match="cannot be rejected"):
        s.act("reject", 0)
    with pytest.raises(KernelLabError, match="Versions are 0 to 2"):
        s.act("apply", 7)


def test_without_a_known_cell_replace_and_its_undo_explain_themselves(tmp_path):
    from kernel_lab.results.optimize import NO_CELL, OptimizeResult

    s = Session.create(tmp_path, "x", "original")
    s.add("fast", origin="search", correct=True, speedup=2.0, significant=True)
    s.act("apply", 1, cell="replaced")  # done earlier, from a notebook
    result, replies = OptimizeResult(Session.open(s.path), "ran 1 round(s)"), []
    result.replace_cell(1, on_done=replies.append)
    result.undo(on_done=replies.append)
    assert replies == [{"ok": False, "error": NO_CELL}] * 2 and len(result.session.actions()) == 1


def test_a_flagged_version_is_not_the_best_nor_applied_until_the_user_confirms_it(tmp_path):
    from kernel_lab.results.optimize import OptimizeResult

    s = Session.create(tmp_path, "x", "original")
    honest = s.add("honest", origin="search", correct=True, speedup=1.5, significant=True)
    flagged = s.add(
        "flagged",
        origin="llm:m",
        correct=True,
        speedup=9.0,
        significant=True,
        warnings=["The candidate launched none of its own kernels: it may fall back to PyTorch."],
    )
    result = OptimizeResult(s, "ran 1 round(s)")
    assert result.best is honest and s.blocked(flagged) and s.waiting() is flagged
    with pytest.raises(KernelLabError, match=r"v002 is blocked by the judge: The candidate launched none.*\.confirm\(2\)"):
        result.apply(2)
    assert "blocked until you check it and `.confirm(2)`" in str(result) and "yes (blocked: see the warning)" in str(result)
    result.confirm(2)
    assert result.best is flagged and not s.blocked(flagged) and s.waiting() is None and result.apply(2) == "flagged"
    assert "allowed by you" in str(result)
    s.undo()  # the apply
    s.undo()  # the confirm
    assert result.best is honest and Session.open(s.path).blocked(Session.open(s.path).versions[2])
    with pytest.raises(KernelLabError, match="v001 has no warning to confirm"):
        result.confirm(1)
