"""The course grades what it teaches (issue #43): a metric scores only for the kind it supports, what a lesson
argues with is accepted, a tie the conductor declares gets full credit with its note, an answer shows only once
asked for, the prose states the rules' own thresholds, and progress without a GPU scores what can be scored."""

from __future__ import annotations

import json

import jupytext
import pytest
from conftest import ROOT, has_gpu

from kernel_lab import course
from kernel_lab.analysis.rules import compute_bound, latency_bound, low_occupancy, memory_bound, uncoalesced_global
from kernel_lab.course import catalog, evidence
from kernel_lab.course.model import Diagnose
from kernel_lab.course.progress import record
from kernel_lab.course.why_not import why_not

DIAGNOSES = [(x, e) for x in catalog.all_lessons() for e in x.exercises if isinstance(e, Diagnose)]


@pytest.fixture(autouse=True)
def progress_here(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("KERNEL_LAB_COURSE_PROGRESS", raising=False)


def part(feedback, name):
    return next(p for p in feedback.parts if p.name == name)


def diagnosis(lesson, ex):
    return next(
        d
        for d in catalog.diagnosis(lesson.id, ex.version).diagnoses
        if d.kernel.name == course.facts(lesson.id, ex.version).main.name
    )


# ---------------------------------------------------------------- the metric backs the kind claimed


def test_a_wrong_kind_gets_no_credit_for_the_evidence_of_the_right_one():
    """dram_pct is the evidence for axpy's memory_bound; claimed for compute_bound it scores nothing."""
    right = course.answer("01_roofline.axpy", kind="memory_bound", metric="dram_pct")
    assert part(right, "metric").verdict == "right"
    wrong = course.answer("01_roofline.axpy", kind="compute_bound", metric="dram_pct")
    metric = part(wrong, "metric")
    assert (
        metric.verdict == "wrong" and metric.credit == 0 and "evidence for memory_bound, not for compute_bound" in metric.message
    )
    assert wrong.score == 0


@pytest.mark.parametrize(("lesson", "exercise"), DIAGNOSES, ids=[f"{x.id}.{e.id}" for x, e in DIAGNOSES])
def test_every_exercise_scores_the_metric_only_for_a_kind_the_profile_shows(lesson, exercise):
    eid = f"{lesson.id}.{exercise.id}"
    f = course.facts(lesson.id, exercise.version)
    metric = next(m for m in f.top.evidence if m in f.main.metrics)
    assert part(course.answer(eid, kind=f.top.kind, metric=metric), "metric").verdict == "right"
    found = {b.kind for b in f.main.bottlenecks}
    for absent in [k for k in ("compute_bound", "memory_bound", "latency_bound", "register_spills") if k not in found][:2]:
        graded = part(course.answer(eid, kind=absent, metric=metric), "metric")
        assert graded.verdict == "wrong" and graded.credit == 0 and "not" in graded.message, (absent, graded.message)


def test_what_the_lessons_argue_with_is_accepted():
    """Lessons 1, 8 and 10 argue latency-bound with DRAM far from its peak: dram_pct backs it."""
    for eid in ("01_roofline.diagnose", "10_capstone.diagnose"):
        assert part(course.answer(eid, kind="latency_bound", metric="dram_pct"), "metric").verdict == "right", eid
    assert evidence.supports("latency_bound", "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed")
    assert not evidence.supports("small_grid", "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed")
    assert not evidence.supports("small_grid", "device__attribute_max_warps_per_multiprocessor")  # readable by every rule


# ---------------------------------------------------------------- ties


TIES = [(x, e) for x, e in DIAGNOSES if diagnosis(x, e).uncertain]


def test_the_recorded_lessons_hold_ties():
    assert {f"{x.id}.{e.id}" for x, e in TIES} >= {"05_tensor_cores.diagnose", "10_capstone.diagnose"}


@pytest.mark.parametrize(("lesson", "exercise"), TIES, ids=[f"{x.id}.{e.id}" for x, e in TIES])
def test_either_kind_of_a_tie_gets_full_credit_with_the_note(lesson, exercise):
    eid = f"{lesson.id}.{exercise.id}"
    f = course.facts(lesson.id, exercise.version)
    for b in f.main.bottlenecks[:2]:
        lines = b.source_lines or f.top.source_lines
        given = {"kind": b.kind, "metric": next(m for m in b.evidence if m in f.main.metrics)}
        if exercise.ask_line:
            given["line"] = lines[0].line
        feedback = course.answer(eid, **given)
        kind = part(feedback, "kind")
        assert feedback.score == 100 and feedback.correct, str(feedback)
        assert "cannot tell which one matters more" in kind.message and "profile again and compare" in kind.message


def test_a_close_second_that_is_no_tie_still_gets_part_credit():
    """Lesson 3's second reading (latency_bound) is not within the conductor's tie: part of the credit only."""
    assert not diagnosis(*next((x, e) for x, e in DIAGNOSES if x.id == "03_bank_conflicts")).uncertain
    kind = part(course.answer("03_bank_conflicts.diagnose", kind="latency_bound"), "kind")
    assert kind.verdict == "partly" and kind.credit < 1


# ---------------------------------------------------------------- answers only when asked


@pytest.mark.parametrize("eid", ["01_roofline.axpy", "04_occupancy.diagnose", "06_fusion.bytes"])
def test_an_empty_answer_shows_nothing_of_the_answer_and_is_not_kept(eid, tmp_path):
    lesson, ex = catalog.exercise(eid)
    f = course.facts(lesson.id, ex.version)
    feedback = course.answer(eid)
    shown = str(feedback) + feedback._repr_html_()
    secret = [f.top.summary, f.top.kind, f"{f.dram_bytes / 1e6:,.0f} MB"]
    assert not any(s in shown for s in secret) and "not answered yet" in shown and f'course.solution("{eid}")' in shown
    assert not (tmp_path / ".kernel_lab").exists()


def test_once_answered_the_feedback_says_what_the_lesson_reads_in_the_profile():
    feedback = course.answer("01_roofline.diagnose", kind="memory_bound")
    ex = catalog.exercise("01_roofline.diagnose")[1]
    assert ex.discussion and ex.discussion in str(feedback) and "latency_bound" in str(feedback)


def test_solution_gives_the_answer_of_a_diagnosis_hidden_until_clicked():
    key = course.solution("05_tensor_cores.diagnose")
    text, html = str(key), key._repr_html_()
    assert "memory_bound or low_occupancy" in text and "cannot tell" in text
    body = html.split("<div class='kl'>", 1)[1]
    assert body.startswith("<details>") and body.endswith("</details></div>")
    line = course.solution("01_roofline.diagnose")
    assert "latency_bound" in str(line) and "tl.store" in str(line)
    assert course.facts("06_fusion", "naive").dram_bytes and "MB" in str(course.solution("06_fusion.bytes"))


# ---------------------------------------------------------------- the rules' thresholds, stated


def test_why_not_states_the_rules_own_thresholds(monkeypatch):
    kernel = catalog.diagnosis("01_roofline", "naive").diagnoses[0].kernel
    for module, name, kind in (
        (memory_bound, "MIN_MEMORY_PCT", "memory_bound"),
        (compute_bound, "MIN_SM_PCT", "compute_bound"),
        (latency_bound, "BUSY_PCT", "latency_bound"),
        (low_occupancy, "THRESHOLD_PCT", "low_occupancy"),
    ):
        assert f"{getattr(module, name):.0f}%" in why_not(kind, kernel)
        monkeypatch.setattr(module, name, 42.0)
        assert "42%" in why_not(kind, kernel), kind
    monkeypatch.setattr(uncoalesced_global, "MIN_EXCESSIVE", 0.33)
    assert "33% or more" in why_not("uncoalesced_global", catalog.diagnosis("02_coalescing", "reference").diagnoses[0].kernel)


def test_the_rules_use_the_thresholds_the_prose_states(monkeypatch):
    """The constants are the rules' own: moved, the verdict moves with them."""
    axpy = catalog.diagnosis("01_roofline", "example_axpy").diagnoses[0].kernel  # memory 89%, SMs 4%
    naive = catalog.diagnosis("01_roofline", "naive").diagnoses[0].kernel  # SMs 25%, memory 37%
    assert memory_bound.evaluate(axpy) is not None and latency_bound.evaluate(naive) is not None
    monkeypatch.setattr(memory_bound, "MIN_MEMORY_PCT", 95.0)
    monkeypatch.setattr(latency_bound, "BUSY_PCT", 30.0)
    assert memory_bound.evaluate(axpy) is None and latency_bound.evaluate(naive) is None


def test_lesson_one_states_the_regimes_thresholds_the_rules_use():
    text = "\n".join(c.source for c in jupytext.read(ROOT / "tutorials" / "01_roofline.md").cells if c.cell_type == "markdown")
    assert f"at least {memory_bound.MIN_MEMORY_PCT:.0f}% of peak" in text
    assert f"above {compute_bound.MIN_SM_PCT:.0f}%" in text and f"both are under {latency_bound.BUSY_PCT:.0f}%" in text


# ---------------------------------------------------------------- progress without a GPU


def test_two_perfect_diagnoses_score_100_not_a_share_of_the_course():
    course.answer("01_roofline.axpy", kind="memory_bound", metric="dram_pct")
    course.answer("01_roofline.gemm", kind="compute_bound", metric="sm_pct")
    p = course.progress()
    assert p.score == 100 and p.done == 2 and "score 100/100 on the 2 graded" in str(p)
    assert "10/100" not in str(p) and "score 100/100 on the 2 graded" in p._repr_html_()


@pytest.mark.slow
@pytest.mark.skipif(has_gpu(), reason="checks the progress kept without a GPU")
def test_a_fix_checked_without_a_gpu_counts_its_correctness_and_says_what_needs_one():
    course.answer("01_roofline.axpy", kind="memory_bound", metric="dram_pct")
    mine = course.cell("01_roofline", "reference") + "\n\nMY_NOTE = 'my own version'\n"
    checked = course.check("01_roofline.fix", mine)
    assert checked.status == "correct on the CPU interpreter" and "— 40/40; its speed and roof" in str(checked)
    cuda = course.check("03_bank_conflicts.fix", course.cell("03_bank_conflicts", "reference"))
    assert cuda.status == "not run (no GPU)" and "— needs a GPU: CUDA cannot run here" in str(cuda)
    p = course.progress()
    rows = {f"{r.lesson}.{r.exercise}": r for r in p.rows}
    assert rows["01_roofline.fix"].shown() == "40/40" and rows["03_bank_conflicts.fix"].shown() == "n/a"
    assert p.score == 100 and p.done == 1  # 100 + 40 of the 40 points a CPU can grade; nothing of the CUDA fix
    text = str(p)
    assert "not graded here: 01_roofline.fix: its speed and roof (60 of 100 points) need a GPU" in text
    assert "03_bank_conflicts.fix: needs a GPU" in text and "score 100/100 on the 2 graded; 2 need a GPU for the rest" in text


def test_a_grading_on_a_gpu_replaces_the_partial_one(tmp_path):
    record("01_roofline.fix", 40, "correct on the CPU interpreter", "", gpu=False, out_of=40, ungraded="needs a GPU")
    record("01_roofline.fix", 70, "short of the target", "", gpu=True)
    record("01_roofline.fix", 40, "correct on the CPU interpreter", "", gpu=False, out_of=40, ungraded="needs a GPU")
    row = next(r for r in course.progress().rows if r.exercise == "fix" and r.lesson == "01_roofline")
    assert (row.best, row.out_of, row.attempts) == (70, 100, 3) and course.progress().score == 70


def test_an_older_progress_file_still_reads(tmp_path):
    old = {"exercises": {"01_roofline.axpy": {"best": 100, "attempts": 1, "last": {"score": 100, "status": "right"}}}}
    (tmp_path / ".kernel_lab" / "course").mkdir(parents=True)
    (tmp_path / ".kernel_lab" / "course" / "progress.json").write_text(json.dumps(old))
    assert course.progress().score == 100 and course.progress().done == 1


def test_on_another_gpu_the_roof_bar_is_what_the_lessons_own_reference_reaches_there():
    """Lesson 3's padded transpose reached 50% of the H100's DRAM roof, where its 45% target was set, and 37% of the
    H200's (stop 50, 97/100 "short of the target"): there the bar is FAIR of the reference's share and the reference
    passes; where the reference reaches more than the target asks, the lesson's target stands."""
    from dataclasses import replace

    from kernel_lab.course.checking import FAIR, _grade, on_this_gpu

    _lesson, ex = catalog.exercise("03_bank_conflicts.fix")
    recorded = course.facts("03_bank_conflicts", "reference")
    assert recorded.roof_fraction is not None and recorded.roof_peak is not None
    assert recorded.roof_fraction == pytest.approx(0.50, abs=0.01) and "H100" in recorded.device

    def on(device: str, share: float):
        """The recorded reference as a GPU whose roof it reaches ``share`` of would show it."""
        return replace(recorded, device=device, roof_peak=recorded.roof_peak * recorded.roof_fraction / share)

    h200 = on("NVIDIA H200", 0.37)
    assert not all(c.met for c in _grade(ex, h200, 1.74)[0])  # the lesson's own target: short there
    target, said = on_this_gpu(ex.target, recorded, h200)
    assert target.fraction == pytest.approx(FAIR * 0.37)
    assert "set on the NVIDIA H100 80GB HBM3, where the lesson's reference reaches 50%" in said and "reaches 37%" in said
    assert all(c.met for c in _grade(replace(ex, target=target), h200, 1.74)[0])
    assert on_this_gpu(ex.target, recorded, on("a faster one", 0.6)) == (ex.target, "")
    assert on_this_gpu(ex.target, recorded, None) == (ex.target, "")  # the reference could not be profiled there
