"""Checking a fix: the judge (fresh inputs, odd shapes, poisoned outputs, anti-cheat), then on a GPU the
speedup, the share of the roof the lesson names, and what the profile of the student's version still
shows. Without a GPU: correctness on Triton's CPU interpreter, said plainly, and the recorded profiles."""

from __future__ import annotations

import ast
import html
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kernel_lab.cells import parse
from kernel_lab.course import catalog, progress
from kernel_lab.course.facts import Facts, facts, of_result
from kernel_lab.course.model import Fix, Lesson, Target
from kernel_lab.display.html import boxed

if TYPE_CHECKING:
    from kernel_lab.verify import Verdict

CORRECT_POINTS = 40  # out of 100: the rest is the target
CPU_SEEDS, GPU_SEEDS = 1, 3  # the judge adds odd shapes and value variants to the declared ones
#: a speedup the judge finds suspicious (over 10x) is accepted up to the lesson's plausible bound
STILL_THERE = 0.03  # a kind the target wants gone still counts when the conductor scores it at least this
MAIN_SHARE = 0.1  # ... in a kernel that takes at least this share of the version's time
#: on a GPU other than the one a lesson was recorded on, where the lesson's own reference reaches less of the roof than
#: the target asks, the bar is this share of what the reference reaches there (lesson 3's padded transpose: 50% of the
#: H100's DRAM roof, 37% of the H200's, against a 45% target set on the H100)
FAIR = 0.9
_HERE: dict[tuple[str, str], Facts | None] = {}  # the lesson's reference profiled on this GPU, by (lesson, GPU)


def _source_of(source: str | Path) -> str:
    if isinstance(source, Path) or ("\n" not in source and source.endswith(".py")):
        path = Path(source)
        if not path.exists():
            raise FileNotFoundError(f"{path} does not exist (write your version with %%writefile {path} first).")
        return path.read_text()
    return source


def normalized(source: str) -> str | None:
    """The source without comments and formatting (CUDA strings too), to recognise known versions."""
    try:
        tree = parse(source)
    except SyntaxError:
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and "\n" in node.value:
            node.value = re.sub(r"\s+", " ", re.sub(r"//[^\n]*", "", node.value)).strip()
        if isinstance(node, (ast.FunctionDef, ast.Module)) and node.body and isinstance(node.body[0], ast.Expr):
            first = node.body[0].value
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                node.body = node.body[1:] or [ast.Pass()]
    return ast.dump(tree, annotate_fields=False)


def known_version(lesson: Lesson, source: str) -> str | None:
    """The name of the lesson's version this source is (comments and formatting aside), if any."""
    mine = normalized(source)
    if mine is None:
        return None
    for v in lesson.versions:
        if normalized(catalog.cell(lesson, v.name)) == mine:
            return v.name
    return None


def _inputs_part(source: str) -> list[ast.stmt]:
    """The statements that make a cell's inputs: imports, module-level constants, make_inputs."""
    keep: list[ast.stmt] = []
    for node in parse(source).body:
        if (
            isinstance(node, (ast.Import, ast.ImportFrom))
            or (isinstance(node, ast.Assign) and "load_inline" not in ast.unparse(node))
            or (isinstance(node, ast.FunctionDef) and node.name == "make_inputs")
        ):
            keep.append(node)
    return keep


def inputs_cell(candidate: str, starter: str) -> str:
    """The cell to profile: the candidate as it is when it makes the lesson's inputs (so a CUDA build is
    reused), else the candidate with the starter's ``make_inputs`` (and what it needs) appended, so the
    profile measures the lesson's problem whatever inputs the candidate's own cell makes."""
    theirs, ours = _inputs_part(candidate), _inputs_part(starter)
    if [ast.dump(n) for n in theirs] == [ast.dump(n) for n in ours]:
        return candidate
    inputs = ast.unparse(ast.Module(body=ours, type_ignores=[]))
    return (
        candidate.rstrip()
        + "\n\n\n# Kernel Lab course: profile the lesson's own inputs\n"
        + f"_kl_course_inputs: dict = {{}}\nexec({inputs!r}, _kl_course_inputs)\nmake_inputs = _kl_course_inputs['make_inputs']\n"
    )


@dataclass(frozen=True)
class Criterion:
    name: str
    met: bool
    credit: float  # 0..1
    message: str


@dataclass(frozen=True)
class CheckResult:
    """A graded fix: correctness, then (on a GPU) the lesson's target; renders as HTML and text."""

    exercise: str
    status: str  # passed, short of the target, correct on the CPU interpreter, wrong, flagged, unchanged, not run
    score: int
    messages: tuple[str, ...]
    target: Target
    gpu: bool
    verdict: Verdict | None = None
    yours: Facts | None = None  # the live profile of the student's version
    shown: tuple[Facts, ...] = ()  # recorded facts shown for comparison
    criteria: tuple[Criterion, ...] = field(default=())

    @property
    def passed(self) -> bool:
        return self.status == "passed"

    def points(self) -> str:
        """'70/100', or what could be graded here: '40/40; its speed and roof (60 of 100 points) need a GPU'."""
        out_of, ungraded = _graded(self.status, self.gpu)
        if out_of >= 100:
            return f"{self.score}/100"
        return f"{self.score}/{out_of}; {ungraded}" if out_of else ungraded

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(str(self))

    def __str__(self) -> str:
        lines = [f"{self.exercise}: {self.status.upper()} — {self.points()} (target: {self.target.describe()})"]
        lines += [f"  {m}" for m in self.messages]
        lines += [f"  [{'met' if c.met else 'short'}] {c.name}: {c.message}" for c in self.criteria]
        lines += [f"  recorded on the H100: {f.sentence()}" for f in self.shown]
        return "\n".join(lines)

    @boxed
    def _repr_html_(self) -> str:
        color = "#2e7d32" if self.passed else "#c62828" if self.status in ("wrong", "flagged") else "#ef6c00"
        items = "".join(f"<li>{html.escape(m)}</li>" for m in self.messages)
        crit = "".join(
            f"<tr><td>{'✔' if c.met else '✘'}</td><td>{html.escape(c.name)}</td><td>{html.escape(c.message)}</td></tr>"
            for c in self.criteria
        )
        shown = "".join(f"<li>{html.escape(f.sentence())}</li>" for f in self.shown)
        return (
            f"<div><p><b style='color:{color}'>{html.escape(self.status)}</b> — <b>{html.escape(self.points())}</b> "
            f"<code>{html.escape(self.exercise)}</code> <small>target: {html.escape(self.target.describe())}</small></p>"
            f"<ul>{items}</ul>"
            + (f"<table class='text'>{crit}</table>" if crit else "")
            + (f"<p>Recorded on the H100:</p><ul>{shown}</ul>" if shown else "")
            + "</div>"
        )

    def roofline(self):
        """The roofline with your version (live) and the recorded versions shown."""
        points = ([self.yours] if self.yours else []) + list(self.shown)
        return _figure(points, f"{self.exercise}: your version and the recorded ones")


def _grade(
    ex: Fix, result_facts: Facts, speedup: float | None, timed_by: str = "judge's medians"
) -> tuple[list[Criterion], float]:
    t = ex.target
    crits: list[Criterion] = []
    if t.fraction is not None:
        frac = result_facts.roof_fraction
        if frac is None:
            crits.append(Criterion(f"{t.fraction:.0%} of the {t.roof} roof", False, 0.0, "no roofline metrics in the profile"))
        else:
            crits.append(
                Criterion(
                    f"{t.fraction:.0%} of the {t.roof} roof",
                    frac >= t.fraction,
                    min(1.0, frac / t.fraction),
                    f"{result_facts.position()}: {result_facts.duration_us:,.1f} µs where {result_facts.least_us:,.1f} µs is the least possible",
                )
            )
    if t.speedup is not None:
        if speedup is None:
            crits.append(Criterion(f"{t.speedup:g}x faster", False, 0.0, "not timed"))
        else:
            crits.append(
                Criterion(
                    f"{t.speedup:g}x faster",
                    speedup >= t.speedup,
                    min(1.0, speedup / t.speedup),
                    f"{speedup:.2f}x the naive version ({timed_by})",
                )
            )
    if t.occupancy is not None:
        occ = result_facts.value("achieved_occupancy_pct")
        crits.append(
            Criterion(
                f"achieved occupancy {t.occupancy:.0f}%",
                occ is not None and occ >= t.occupancy,
                0.0 if occ is None else min(1.0, occ / t.occupancy),
                "not collected" if occ is None else f"{occ:.0f}% of the SM's warp slots busy on average",
            )
        )
    for kind in t.gone:
        total = result_facts.duration_us or 1.0
        still = [
            b
            for k in result_facts.kernels
            if k.duration_us >= MAIN_SHARE * total  # a tiny second pass may keep a small grid
            for b in k.bottlenecks
            if b.kind == kind and b.score >= STILL_THERE
        ]
        crits.append(
            Criterion(
                f"no {kind}",
                not still,
                0.0 if still else 1.0,
                f"still there: {still[0].summary} (score {still[0].score:.2f})" if still else "gone from the conductor's ranking",
            )
        )
    if ex.graded_by_roof and t.fraction is not None and result_facts.roof_fraction is not None:
        return crits, min(1.0, result_facts.roof_fraction / t.fraction)
    credit = sum(c.credit for c in crits) / len(crits) if crits else 1.0
    return crits, credit if all(c.met for c in crits) else min(credit, 0.95)


def _still_shows(f: Facts, gone: tuple[str, ...]) -> str:
    """What the profile still shows: its first bottleneck of a kind the target wants gone (the criterion not met),
    else the conductor's first."""
    left = [b for kind in gone if (b := f.bottleneck(kind)) is not None and b.score >= STILL_THERE]
    top = left[0] if left else f.top
    if top is None:
        return "Your version's profile ranks no bottleneck."
    first = top.hint.split(". ")[0]
    return f"Your version's profile still shows {top.kind} (score {top.score:.2f}): {top.summary}. {first}."


def _recorded_match(lesson: Lesson, name: str, ex: Fix) -> tuple[list[str], list[Criterion], float, Facts | None]:
    v = lesson.version(name)
    if not v.recorded:
        return [], [], 0.0, None
    f = facts(lesson.id, name)
    judged = f"{v.role} '{name}'" if v.role != "reference" else "reference solution"
    msgs = [f"Your version is the lesson's recorded {judged} ({v.title})."]
    crits, credit = _grade(ex, f, _recorded_speedup(lesson, ex, f), "from the recorded durations")
    if v.note:
        msgs.append(v.note)
    return msgs, crits, credit, f


def _recorded_speedup(lesson: Lesson, ex: Fix, f: Facts) -> float | None:
    start = facts(lesson.id, ex.starter)
    return start.duration_us / f.duration_us if f.duration_us else None


def _accepted(verdict: Verdict, ex: Fix) -> list[str]:
    """The judge's warnings that still stand (a speedup over 10x is fine up to the lesson's plausible bound)."""
    speedup = verdict.timing.speedup if verdict.timing else None
    plausible = speedup is not None and speedup <= ex.plausible_speedup
    return [w.text for w in verdict.warnings if not (w.kind == "suspicious_speedup" and plausible)]


def _graded(status: str, gpu: bool) -> tuple[int, str]:
    """The points a check could grade where it ran (out of 100), and what the others need."""
    rest = f"its speed and roof ({100 - CORRECT_POINTS} of 100 points)"
    if status == "not run (no GPU)":
        return 0, "needs a GPU: CUDA cannot run here, nothing was graded"
    if status == "correct (not profiled)":
        return CORRECT_POINTS, f"{rest} need a profile"
    if not gpu and status in ("wrong", "flagged", "correct on the CPU interpreter"):
        return CORRECT_POINTS, f"{rest} need a GPU"
    return 100, ""


def _has_gpu() -> bool:
    from kernel_lab.profiling.ncu import has_gpu

    return has_gpu()


def check(
    exercise_id: str, source: str | Path, *, gpu: bool | None = None, profile: bool = True, timeout: float = 900.0
) -> CheckResult:
    """Check your version of a fix exercise: ``source`` is the cell's code, or the path of a file holding it.

    The judge runs it against the lesson's starting kernel in a separate process (fresh inputs for several
    seeds and every shape, outputs poisoned, anti-cheat checks). On a GPU it is timed, profiled with
    Nsight Compute on the lesson's inputs and graded against the lesson's target; without one, Triton code
    runs on the CPU interpreter (correctness only) and CUDA cannot run at all. The score is kept in the
    course's progress file.
    """
    from kernel_lab.verify import verify

    lesson, ex = catalog.exercise(exercise_id)
    if not isinstance(ex, Fix):
        raise TypeError(f"{exercise_id} is not a fix exercise: answer it with course.answer({exercise_id!r}, ...).")
    code = _source_of(source)
    starter = catalog.cell(lesson, ex.starter)
    gpu = _has_gpu() if gpu is None else gpu
    cuda = "load_inline" in code
    match = known_version(lesson, code)
    reference = facts(lesson.id, ex.reference)

    def done(status: str, score: int, messages: list[str], **kw: Any) -> CheckResult:
        result = CheckResult(exercise_id, status, score, tuple(messages), ex.target, gpu, **kw)
        if status != "unchanged":
            out_of, ungraded = _graded(status, gpu)
            progress.record(exercise_id, score, status, str(result), gpu=gpu, out_of=out_of, ungraded=ungraded)
        return result

    if match == ex.starter:
        return done(
            "unchanged",
            0,
            [f"This is the lesson's starting kernel, unchanged: edit it, then check again. {ex.task}"],
            shown=(facts(lesson.id, ex.starter),),
        )

    if not gpu:
        if cuda:
            msgs = [
                "CUDA code cannot be compiled or run on a machine without an NVIDIA GPU: your version was not checked"
                " here, not for correctness and not for speed. Run this check on a GPU machine."
            ]
            shown: list[Facts] = [reference]
            if match:
                more, crits, _, f = _recorded_match(lesson, match, ex)
                msgs += [
                    *more,
                    "What its recording shows against the target is listed below (from the H100, not a check of yours).",
                ]
                shown = [f] if f else shown
                return done("not run (no GPU)", 0, msgs, shown=tuple(shown), criteria=tuple(crits))
            msgs.append("What the reference solution measured on the H100 is below: your target.")
            return done("not run (no GPU)", 0, msgs, shown=tuple(shown))
        if match and lesson.version(match).role in ("attempt", "example"):
            more, crits, credit, f = _recorded_match(lesson, match, ex)
            met = all(c.met for c in crits)
            msgs = [*more, "It was judged correct on the H100 when it was recorded; graded from that recording:"]
            if not met and f is not None:
                msgs.append(_still_shows(f, ex.target.gone).replace("Your version's profile", "Its recorded profile"))
            score = CORRECT_POINTS + round((100 - CORRECT_POINTS) * credit)
            return done(
                "passed" if met else "short of the target", score, msgs, shown=tuple(x for x in (f,) if x), criteria=tuple(crits)
            )
        verdict = verify(starter, code, seeds=CPU_SEEDS, time=False, device="cpu", timeout=timeout)
        if not verdict.correct:
            return done("wrong", 0, [f"Wrong (Triton's CPU interpreter): {verdict.reason}"], verdict=verdict, shown=(reference,))
        warnings = _accepted(verdict, ex)
        if warnings:
            return done("flagged", 0, [f"flagged: {w}" for w in warnings], verdict=verdict, shown=(reference,))
        msgs = [
            f"Correct on Triton's CPU interpreter ({verdict.checks} input sets, every shape of the lesson).",
            "Speed cannot be measured here: there is no GPU. Run the check on a GPU machine for the speed and the roofline grade.",
        ]
        if match:
            more, crits, credit, f = _recorded_match(lesson, match, ex)
            msgs += [*more, "Graded from the H100 recording of this very version:"]
            met = all(c.met for c in crits)
            score = CORRECT_POINTS + round((100 - CORRECT_POINTS) * credit)
            status = "passed" if met else "short of the target"
            if not met and f is not None:
                msgs.append(_still_shows(f, ex.target.gone).replace("Your version's profile", "Its recorded profile"))
            return done(status, score, msgs, verdict=verdict, shown=tuple(x for x in (f,) if x), criteria=tuple(crits))
        msgs.append("The reference solution, recorded on the H100 — the target to beat:")
        return done("correct on the CPU interpreter", CORRECT_POINTS, msgs, verdict=verdict, shown=(reference,))

    verdict = verify(starter, code, seeds=GPU_SEEDS, time=True, timeout=timeout)
    if not verdict.correct:
        return done("wrong", 0, [f"Wrong: {verdict.reason}"], verdict=verdict, shown=(reference,))
    warnings = _accepted(verdict, ex)
    if warnings:
        return done("flagged", 0, [f"flagged: {w}" for w in warnings], verdict=verdict, shown=(reference,))
    speedup = verdict.timing.speedup if verdict.timing else None
    msgs = [f"Correct: {verdict.summary()}."]
    if not profile:
        crits = [c for c in _grade(ex, reference, speedup)[0] if "faster" in c.name]
        return done("correct (not profiled)", CORRECT_POINTS, msgs, verdict=verdict, criteria=tuple(crits), shown=(reference,))
    from kernel_lab.api import profile as run_profile

    try:
        live = run_profile(inputs_cell(code, starter), launch_count=20)
    except Exception as exc:  # noqa: BLE001 - any profiling failure is reported, the judge's verdict stands
        msgs.append(f"Could not profile your version ({type(exc).__name__}: {str(exc)[:300]}); graded on speed only.")
        crits = [c for c in _grade(ex, reference, speedup)[0] if "faster" in c.name]
        return done("correct (not profiled)", CORRECT_POINTS, msgs, verdict=verdict, criteria=tuple(crits), shown=(reference,))
    work = lesson.version(ex.starter).work or ex.work
    yours = of_result(live, lesson, "your version", work, ex.target.roof)
    if ex.target.fraction is not None and yours.device != reference.device:
        here = yours if match == ex.reference else _reference_here(lesson, ex, starter, work, yours.device)
        target, said = on_this_gpu(ex.target, reference, here)
        ex = replace(ex, target=target)
        msgs += [said] if said else []
    crits, credit = _grade(ex, yours, speedup)
    met = all(c.met for c in crits)
    msgs.append(yours.sentence())
    if not met:
        msgs.append(_still_shows(yours, ex.target.gone))
    score = CORRECT_POINTS + round((100 - CORRECT_POINTS) * credit)
    return done(
        "passed" if met else "short of the target",
        score,
        msgs,
        verdict=verdict,
        yours=yours,
        criteria=tuple(crits),
        shown=(reference,),
    )


def _reference_here(lesson: Lesson, ex: Fix, starter: str, work: Any, device: str) -> Facts | None:
    """The lesson's reference solution profiled on this GPU (once per GPU and process), or None when it cannot be."""
    from kernel_lab.api import profile as run_profile

    key = (lesson.id, device)
    if key not in _HERE:
        try:
            live = run_profile(inputs_cell(catalog.cell(lesson, ex.reference), starter), launch_count=20)
            _HERE[key] = of_result(live, lesson, f"{ex.reference} (on this GPU)", work, ex.target.roof)
        except Exception:  # noqa: BLE001 - then the lesson's own target stands
            _HERE[key] = None
    return _HERE[key]


def on_this_gpu(target: Target, recorded: Facts, here: Facts | None) -> tuple[Target, str]:
    """The target as graded on the GPU ``here`` (the lesson's reference profiled on it) was measured on, and the
    sentence that says why when it differs: where the reference reaches less of this GPU's roof than the target,
    set where the reference was ``recorded``, asks, the bar is :data:`FAIR` of the reference's share here."""
    share = here.roof_fraction if here is not None else None
    if target.fraction is None or here is None or share is None or FAIR * share >= target.fraction:
        return target, ""
    said = (
        f"The target's {target.fraction:.0%} of the {target.roof} roof was set on the {recorded.device}, where the "
        f"lesson's reference reaches {recorded.roof_fraction or 0:.0%}; on this {here.device} it reaches {share:.0%}, "
        f"so the bar here is {FAIR:.0%} of that: {FAIR * share:.0%}."
    )
    return replace(target, fraction=FAIR * share), said


# ---------------------------------------------------------------- solutions, starters, figures


def starter(exercise_id: str) -> str:
    """The starting kernel of a fix exercise (to begin again)."""
    lesson, ex = catalog.exercise(exercise_id)
    if not isinstance(ex, Fix):
        raise TypeError(f"{exercise_id} is not a fix exercise.")
    return catalog.cell(lesson, ex.starter)


@dataclass(frozen=True)
class Solution:
    """The reference solution of a fix exercise with its recorded profile; hidden in a notebook until clicked."""

    exercise: str
    source: str
    before: Facts
    after: Facts
    note: str

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(str(self))

    def __str__(self) -> str:
        return (
            f"Reference solution of {self.exercise}: {self.note}\n\n{self.source}\n"
            f"before: {self.before.sentence()}\nafter:  {self.after.sentence()}\n"
            f"{self.before.duration_us / self.after.duration_us:.2f}x faster on the H100."
        )

    @boxed
    def _repr_html_(self) -> str:
        speed = self.before.duration_us / self.after.duration_us
        return (
            f"<details><summary><b>Show the reference solution of <code>{html.escape(self.exercise)}</code></b> "
            "(try the exercise first)</summary>"
            f"<p>{html.escape(self.note)}</p><pre>{html.escape(self.source)}</pre>"
            f"<p>Before: {html.escape(self.before.sentence())}<br>After: {html.escape(self.after.sentence())}<br>"
            f"<b>{speed:.2f}x faster</b> on the H100.</p></details>"
        )

    def roofline(self):
        """Before and after on the roofline, with an arrow."""
        return _figure([self.before, self.after], f"{self.exercise}: naive → reference", arrow=True)


def reference_solution(exercise_id: str) -> Solution:
    """The reference solution of a fix exercise, its recorded profile and its roofline point."""
    lesson, ex = catalog.exercise(exercise_id)
    if not isinstance(ex, Fix):
        raise TypeError(f"{exercise_id} is not a fix exercise.")
    v = lesson.version(ex.reference)
    return Solution(
        exercise_id,
        catalog.cell(lesson, ex.reference),
        facts(lesson.id, ex.starter),
        facts(lesson.id, ex.reference),
        v.note or v.title,
    )


def _figure(points: list[Facts], title: str, arrow: bool = False):
    from kernel_lab.display.roofline import figure

    rooflines = [replace(f.main.roofline, kernel=f"{f.version} ({f.main.name})") for f in points]
    top = {(r.kernel, r.launch): (f.top.kind if f.top else "none") for r, f in zip(rooflines, points)}
    arrows = [(rooflines[0], rooflines[-1])] if arrow and len(rooflines) > 1 else []
    return figure(rooflines, top=top, arrows=arrows, title=title)


def roofline(lesson_id: str | int, versions: list[str] | None = None, title: str | None = None):
    """The recorded versions of a lesson on one roofline (plotly), naive → reference arrowed."""
    the_lesson = catalog.lesson(lesson_id)
    names = versions or [v.name for v in the_lesson.versions if v.recorded]
    points = [facts(the_lesson.id, n) for n in names]
    fig = _figure(points, title or f"Lesson {the_lesson.number}: {the_lesson.title}")
    fix = the_lesson.fix
    if fix and fix.starter in names and fix.reference in names:
        pts = {n: p for n, p in zip(names, points)}
        arrowed = _figure([pts[fix.starter], pts[fix.reference]], "", arrow=True)
        for a in arrowed.layout.annotations:
            if a.showarrow:
                fig.add_annotation(a)
    return fig
