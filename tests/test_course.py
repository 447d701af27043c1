"""The course (issue #11): lessons on disk, notebooks in sync with their tutorials, recorded profiles that
show what each lesson teaches, and graded answers and checks that can fail, each saying why."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import jupytext
import nbformat
import pytest
from conftest import ROOT, has_gpu

from kernel_lab import course
from kernel_lab.course import catalog, checking
from kernel_lab.course.model import Diagnose, Fix

LESSONS = catalog.all_lessons()
FIXES = [(lesson, e) for lesson in LESSONS for e in lesson.exercises if isinstance(e, Fix)]
DIAGNOSES = [(lesson, e) for lesson in LESSONS for e in lesson.exercises if isinstance(e, Diagnose)]
TRITON_FIXES = [(lesson, e) for lesson, e in FIXES if lesson.language == "triton"]
CUDA_FIXES = [(lesson, e) for lesson, e in FIXES if lesson.language == "cuda"]
MAGIC = re.compile(r'^%%(profile|optimize) --(?:or-)?replay \{course\.report\("(\w+)", "(\w+)"\)\}')


def ids(pairs):
    return [f"{lesson.id}.{e.id}" for lesson, e in pairs]


@pytest.fixture(autouse=True)
def progress_here(tmp_path, monkeypatch):
    """Every test keeps its course progress in its own folder."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("KERNEL_LAB_COURSE_PROGRESS", raising=False)


# ---------------------------------------------------------------- the course on disk


def test_ten_lessons_with_their_files():
    assert [lesson.number for lesson in LESSONS] == list(range(1, 11))
    total = 0
    for lesson in LESSONS:
        assert (ROOT / "tutorials" / f"{lesson.id}.md").exists() and (ROOT / "notebooks" / f"{lesson.id}.ipynb").exists()
        assert lesson.fix is not None and lesson.of_role("naive") and lesson.of_role("reference")
        assert lesson.of_role("wrong") and lesson.of_role("cheat"), lesson.id
        for v in lesson.versions:
            assert catalog.cell_path(lesson, v.name).exists()
            if v.recorded:
                total += course.report(lesson.id, v.name).stat().st_size
    assert total <= 20 * 2**20  # the recorded reports stay small


def test_notebooks_and_tutorials_are_in_sync():
    for lesson in LESSONS:
        text = jupytext.read(ROOT / "tutorials" / f"{lesson.id}.md")
        nb = nbformat.read(ROOT / "notebooks" / f"{lesson.id}.ipynb", as_version=4)
        assert [(c.cell_type, c.source) for c in text.cells] == [(c.cell_type, c.source) for c in nb.cells], (
            f"{lesson.id}: run `jupytext --sync tutorials/{lesson.id}.md`"
        )
        assert nb.metadata["jupytext"]["formats"] == "notebooks//ipynb,tutorials//md"
        assert all(not c.get("outputs") and not c.get("execution_count") for c in nb.cells if c.cell_type == "code")


def test_notebook_cells_are_the_recorded_cells():
    """What a notebook profiles is exactly the cell whose report it replays, and the fix starts from the naive cell."""
    for lesson in LESSONS:
        nb = nbformat.read(ROOT / "notebooks" / f"{lesson.id}.ipynb", as_version=4)
        code = [c.source for c in nb.cells if c.cell_type == "code"]
        assert code[0].startswith("%load_ext kernel_lab\nfrom kernel_lab import course")
        profiled = 0
        for source in code:
            first, _, body = source.partition("\n")
            if m := MAGIC.match(first):
                assert m.group(2) == lesson.id
                assert body == course.cell(lesson.id, m.group(3)).rstrip("\n"), f"{lesson.id}: {m.group(3)}"
                profiled += 1
            if first.startswith("%%writefile"):
                assert first == f"%%writefile fix_{lesson.id}.py" and body == course.starter(f"{lesson.id}.fix").rstrip("\n")
        assert profiled >= 1, lesson.id


def test_no_measured_number_is_typed_into_the_text():
    """Durations, bytes, rates and speedups in a lesson's text and in what it says about an answer are printed by
    code from the reports."""
    measured = re.compile(r"\b\d[\d,.]*\s*(µs|us|ms|KB|MB|GB|TB/s|GB/s|TFLOP/s)\b|\b\d+(\.\d+)?x (faster|slower)")
    for lesson in LESSONS:
        texts = [c.source for c in jupytext.read(ROOT / "tutorials" / f"{lesson.id}.md").cells if c.cell_type == "markdown"]
        texts += [getattr(e, "discussion", "") for e in lesson.exercises]
        for text in texts:
            assert not measured.search(text), f"{lesson.id}: {measured.search(text).group(0)!r}"


# ---------------------------------------------------------------- what the recordings show


@pytest.mark.parametrize(("lesson", "exercise"), DIAGNOSES, ids=ids(DIAGNOSES))
def test_the_recorded_profile_shows_what_the_lesson_teaches(lesson, exercise):
    f = course.facts(lesson.id, exercise.version)
    assert f.top is not None and f.top.kind == exercise.expect
    if exercise.ask_line:
        assert f.top.source_lines, "the exercise asks for a line: the conductor must point at one"


@pytest.mark.parametrize(("lesson", "fix"), FIXES, ids=ids(FIXES))
def test_the_reference_meets_the_target_and_the_naive_and_attempts_do_not(lesson, fix):
    def grade(name):
        f = course.facts(lesson.id, name)
        return checking._grade(fix, f, course.facts(lesson.id, fix.starter).duration_us / f.duration_us)[0]

    assert all(c.met for c in grade(fix.reference)), [c for c in grade(fix.reference) if not c.met]
    assert not all(c.met for c in grade(fix.starter))
    for attempt in lesson.of_role("attempt"):
        assert not all(c.met for c in grade(attempt.name)), attempt.name


# ---------------------------------------------------------------- diagnosis answers


def right_answer(lesson, exercise):
    top = course.facts(lesson.id, exercise.version).top
    line = top.source_lines[0].line if exercise.ask_line else None
    metric = next(m for m in top.evidence if m in course.facts(lesson.id, exercise.version).main.metrics)
    return {"kind": top.kind, "line": line, "metric": metric, "limiter": top.limiter}


@pytest.mark.parametrize(("lesson", "exercise"), DIAGNOSES, ids=ids(DIAGNOSES))
def test_a_right_diagnosis_scores_full_marks_and_each_wrong_part_is_explained(lesson, exercise):
    eid = f"{lesson.id}.{exercise.id}"
    good = right_answer(lesson, exercise)
    feedback = course.answer(eid, **good)
    assert feedback.correct and feedback.score == 100, str(feedback)

    wrong_kind = "compute_bound" if good["kind"] != "compute_bound" else "memory_bound"
    unrelated = (
        "launch__grid_size" if good["kind"] == "shared_bank_conflicts" else "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld"
    )
    bad = course.answer(eid, **{**good, "kind": wrong_kind, "metric": unrelated, "limiter": None})
    parts = {p.name: p for p in bad.parts}
    assert parts["kind"].verdict in ("wrong", "partly") and good["kind"] in parts["kind"].message
    assert parts["metric"].verdict == "wrong" and "not for" in parts["metric"].message
    assert bad.score < 60
    if exercise.ask_line:
        wrong_line = course.answer(eid, **{**good, "line": "import torch"})
        part = next(p for p in wrong_line.parts if p.name == "line")
        assert part.verdict == "wrong" and "point elsewhere" in part.message
    if exercise.ask_limiter:
        part = next(p for p in course.answer(eid, **{**good, "limiter": "warps"}).parts if p.name == "limiter")
        assert part.verdict == "wrong" and good["limiter"].replace("_", " ") in part.message


def test_a_line_may_be_given_as_code_or_in_the_notebooks_numbering():
    top = course.facts("02_coalescing", "naive").top
    line = top.source_lines[0].line
    for given in (line, line + 1, "tl.load(aos_ptr + p * 4 + field"):
        part = next(p for p in course.answer("02_coalescing.diagnose", kind=top.kind, line=given).parts if p.name == "line")
        assert part.verdict == "right", given
    cuda = course.facts("03_bank_conflicts", "naive").top.source_lines[0]
    assert cuda.file.endswith("cuda.cu")
    cell_lines = course.cell("03_bank_conflicts", "naive").splitlines()
    in_cell = next(i for i, text in enumerate(cell_lines, 1) if text.strip() and text.strip() in cuda.text)
    for given in (cuda.line, in_cell, in_cell + 1):
        part = next(p for p in course.answer("03_bank_conflicts.diagnose", line=given).parts if p.name == "line")
        assert part.verdict == "right", given


def test_the_bytes_estimate_is_checked_against_the_measured_traffic():
    measured = course.facts("06_fusion", "naive").dram_bytes
    by_hand = 5 * 8192 * 4096 * 4  # x twice, e written and read, out written
    assert course.answer("06_fusion.bytes", value=by_hand).correct
    wrong = course.answer("06_fusion.bytes", value=2 * 8192 * 4096 * 4)
    assert not wrong.correct and f"{measured / 1e6:,.0f} MB" in wrong.parts[0].message and "moved more" in wrong.parts[0].message


@pytest.mark.slow
def test_progress_is_kept_on_disk_and_survives_a_restart(tmp_path):
    course.answer("01_roofline.axpy", kind="memory_bound", metric="dram_pct")
    course.answer("01_roofline.gemm", kind="latency_bound", metric="sm_pct")
    course.answer("01_roofline.axpy", kind="", metric="")  # empty: not an attempt
    stored = json.loads((tmp_path / ".kernel_lab" / "course" / "progress.json").read_text())["exercises"]
    assert stored["01_roofline.axpy"]["best"] == 100 and stored["01_roofline.axpy"]["attempts"] == 1
    fresh = subprocess.run(
        [sys.executable, "-c", "from kernel_lab import course; print(course.progress())"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "01_roofline.axpy" in fresh and "100" in fresh and "2 of" not in fresh
    html = course.progress()._repr_html_()
    assert "<table class='text'>" in html and "01_roofline" in html


# ---------------------------------------------------------------- fix checks without a GPU


def slow_version(lesson, fix):
    """A correct but slow answer: a recorded attempt (graded from its recording), else the starter."""
    attempts = lesson.of_role("attempt")
    return attempts[0].name if attempts else fix.starter


@pytest.mark.slow
@pytest.mark.skipif(has_gpu(), reason="checks the messages given without a GPU")
def test_triton_fixes_without_a_gpu_tell_wrong_slow_and_cheating_answers_why():
    """For every Triton fix exercise: a wrong answer, a correct-but-slow one and a cheating one are each told
    why; the reference passes (graded from its H100 recording, correctness checked on the CPU interpreter)."""

    def run(case):
        lesson, fix, kind = case
        name = {
            "wrong": lesson.of_role("wrong")[0].name,
            "cheat": lesson.of_role("cheat")[0].name,
            "slow": slow_version(lesson, fix),
            "reference": fix.reference,
        }[kind]
        return case, course.check(f"{lesson.id}.fix", course.cell(lesson.id, name))

    cases = [(lesson, fix, kind) for lesson, fix in TRITON_FIXES for kind in ("wrong", "cheat", "slow", "reference")]
    with ThreadPoolExecutor(3) as pool:
        results = list(pool.map(run, cases))
    for (lesson, _fix, kind), r in results:
        text = str(r)
        where = f"{lesson.id} {kind}: {text}"
        if kind == "wrong":
            assert r.status == "wrong" and r.score == 0 and ("differs from the reference" in text or "NaN" in text), where
        elif kind == "cheat":
            assert r.status == "flagged" and r.score == 0 and "flagged: " in text, where
        elif kind == "slow":
            assert r.status in ("short of the target", "unchanged") and r.score < 100, where
            assert "still shows" in text or "starting kernel" in text, where
            assert any(not c.met for c in r.criteria) or r.status == "unchanged", where
        else:
            assert r.status == "passed" and r.score == 100 and "CPU interpreter" in text, where


@pytest.mark.slow
@pytest.mark.skipif(has_gpu(), reason="checks the messages given without a GPU")
def test_a_new_correct_version_is_checked_on_the_cpu_and_told_speed_cannot_be_measured():
    mine = course.cell("01_roofline", "reference") + "\n\nMY_NOTE = 'my own version'\n"
    r = course.check("01_roofline.fix", mine)
    assert r.status == "correct on the CPU interpreter" and r.score == 40
    assert "Speed cannot be measured here" in str(r) and r.shown and r.shown[0].version == "reference"


@pytest.mark.skipif(has_gpu(), reason="checks the messages given without a GPU")
@pytest.mark.parametrize(("lesson", "fix"), CUDA_FIXES, ids=ids(CUDA_FIXES))
def test_cuda_fixes_without_a_gpu_say_plainly_that_nothing_ran(lesson, fix):
    for version in (lesson.of_role("wrong")[0].name, lesson.of_role("cheat")[0].name, fix.reference):
        r = course.check(f"{lesson.id}.fix", course.cell(lesson.id, version))
        assert r.status == "not run (no GPU)" and r.score == 0
        assert "cannot be compiled or run on a machine without an NVIDIA GPU" in str(r)
        assert r.shown, "the recorded profile is shown instead"
    slow = course.check(f"{lesson.id}.fix", course.cell(lesson.id, slow_version(lesson, fix)))
    assert any(not c.met for c in slow.criteria), "what the recording of the slow attempt lacks is listed"


def test_the_unchanged_starter_is_not_graded():
    r = course.check("02_coalescing.fix", course.starter("02_coalescing.fix"))
    assert r.status == "unchanged" and "edit it" in str(r) and r.shown[0].version == "naive"
    assert course.progress().rows[5][3] == "not attempted"


def test_a_solution_is_hidden_until_clicked():
    s = course.solution("02_coalescing.fix")
    html = s._repr_html_()
    body = html.split("<div class='kl'>", 1)[1]  # after Kernel Lab's style, everything is inside the closed <details>
    assert body.startswith("<details>") and body.endswith("</details></div>") and "Show the reference solution" in html
    assert s.source == course.cell("02_coalescing", "reference") and "faster on the H100" in str(s)


def test_candidates_are_profiled_on_the_lessons_inputs():
    naive, ref = course.cell("02_coalescing", "naive"), course.cell("02_coalescing", "reference")
    assert checking.inputs_cell(ref, naive) == ref  # same inputs: profiled as written (CUDA builds are reused)
    smaller = ref.replace("N = 2**24 if", "N = 2**10 if")
    cell = checking.inputs_cell(smaller, naive)
    namespace: dict = {}
    exec(compile("# " + cell.split("\n\n\n# Kernel Lab course")[1], "inputs", "exec"), namespace)  # noqa: S102
    assert "2 ** 24" in cell and namespace["make_inputs"].__defaults__ == (1000,)  # the lesson's, not the candidate's


# ---------------------------------------------------------------- on a GPU


@pytest.mark.gpu
@pytest.mark.parametrize(("lesson", "fix"), FIXES, ids=ids(FIXES))
def test_on_a_gpu_the_reference_passes_and_wrong_slow_and_cheating_answers_are_told_why(lesson, fix):
    eid = f"{lesson.id}.fix"
    passed = course.check(eid, course.cell(lesson.id, fix.reference))
    assert passed.status == "passed" and passed.yours is not None and passed.score == 100, str(passed)
    wrong = course.check(eid, course.cell(lesson.id, lesson.of_role("wrong")[0].name))
    assert wrong.status == "wrong" and "Wrong:" in str(wrong)
    cheat = course.check(eid, course.cell(lesson.id, lesson.of_role("cheat")[0].name))
    assert cheat.status == "flagged" and "flagged: " in str(cheat)
    slow_name = slow_version(lesson, fix)
    if slow_name != fix.starter:
        slow = course.check(eid, course.cell(lesson.id, slow_name))
        assert slow.status == "short of the target" and "still shows" in str(slow), str(slow)


FAKE = ROOT / "tests" / "fake_gpu"


@pytest.mark.slow
@pytest.mark.skipif(has_gpu(), reason="uses a stand-in GPU and ncu")
@pytest.mark.parametrize(("version", "status"), [("reference", "passed"), ("attempt_field_loads", "short of the target")])
def test_the_gpu_path_grades_the_live_profile_and_says_what_it_still_shows(version, status, monkeypatch, tmp_path):
    """The check's GPU branch with a stand-in nvidia-smi and ncu: the judge runs (here on the CPU), the
    stand-in ncu hands back the version's recorded report as the live profile, which is graded."""
    monkeypatch.setenv("PATH", f"{FAKE / 'path'}:/usr/bin:/bin:{sys.executable.rsplit('/', 1)[0]}")
    monkeypatch.setenv("KERNEL_LAB_NCU", str(FAKE / "ncu"))
    monkeypatch.setenv("FAKE_NCU", "ok")
    monkeypatch.setenv("FAKE_NCU_REPORT", str(course.report("02_coalescing", version)))
    monkeypatch.setenv("FAKE_NCU_ARGV", str(tmp_path / "argv.json"))
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    # The stand-in GPU is Triton's CPU interpreter, where the field-loads attempt runs at 0.85x the naive's speed
    # on the lesson's small shape (measured four times: 0.85-0.86), so noise now and then crosses the judge's 0.8
    # bar for "slower on another shape" and flags it (once 2.37x slower, with other work on the 2-core machine). This
    # test is about grading the live profile, not CPU speed.
    monkeypatch.setattr("kernel_lab.verify.checks.SLOWER", 0.05)
    r = course.check("02_coalescing.fix", course.cell("02_coalescing", version))
    assert r.gpu and r.yours is not None and not r.yours.replay and r.status == status, str(r)
    assert r.verdict is not None and r.verdict.timing is not None
    argv = json.loads((tmp_path / "argv.json").read_text())
    assert "--nvtx-include" in argv and any("aos_to_soa_kernel" in a for a in argv)  # the product's collection
    if status == "passed":
        assert r.score == 100 and "at 90% of the DRAM roof" in str(r)
    else:
        assert "still shows uncoalesced_global" in str(r) and r.score < 100
