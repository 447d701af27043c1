"""Grading a diagnosis: the student names what limits a kernel, on which line, with which metric as
evidence, and the answer is checked against the report (recorded, or the student's live profile) and
the conductor's ranking. Every wrong part is explained with the report's own numbers.

The kind is right when it is the conductor's first, or one of the two it calls a tie; the line and the
limiter are those of the kind claimed (when it is right); the metric is right only when it supports the
kind claimed (:mod:`kernel_lab.course.evidence`) and the profile shows that kind."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from kernel_lab import metrics as M
from kernel_lab.course import catalog, evidence, progress
from kernel_lab.course.facts import Facts, KernelFacts, mb, of_result, work_and_roof
from kernel_lab.course.feedback import Feedback, Part
from kernel_lab.course.model import Diagnose, Estimate, Lesson
from kernel_lab.course.why_not import why_not
from kernel_lab.errors import KernelLabError
from kernel_lab.models import KINDS, LIMITERS

if TYPE_CHECKING:
    from kernel_lab.models import Bottleneck, Diagnosis, Kernel
    from kernel_lab.results.profile import Result

#: Names a student may use for a metric: the dashboard's summary columns and a few plain words.
ALIASES: dict[str, tuple[str, ...]] = {
    "sm_pct": (M.SM_PCT,),
    "memory_pct": (M.MEM_PCT,),
    "dram_pct": (M.DRAM_PCT,),
    "l2_pct": (M.L2_PCT,),
    "l1_pct": (M.L1_PCT,),
    "achieved_occupancy_pct": (M.ACHIEVED_OCC,),
    "theoretical_occupancy_pct": (M.THEORETICAL_OCC,),
    "registers_per_thread": (M.REGISTERS,),
    "shared_mem_per_block": (M.SHARED_PER_BLOCK,),
    "grid_size": (M.GRID,),
    "block_size": (M.BLOCK,),
    "waves": (M.WAVES,),
    "dram_bytes": (M.DRAM_READ, M.DRAM_WRITE),
    "excessive_sectors": (M.SECTORS_EXCESSIVE,),
    "bank_conflicts": (M.SHARED_LD_CONFLICTS, M.SHARED_ST_CONFLICTS),
}
WEIGHTS = {"kind": 0.5, "limiter": 0.1, "line": 0.2, "metric": 0.2}


# ---------------------------------------------------------------- what the conductor and the lesson say


def tied(d: Diagnosis) -> tuple[str, ...]:
    """The two kinds the conductor calls a tie (its ``uncertain`` note names its first two readings), else ()."""
    return tuple(b.kind for b in d.bottlenecks[:2]) if d.uncertain else ()


def kind_name(given: str | None) -> str:
    """A kind as the student wrote it, in the conductor's spelling ("memory-bound" -> "memory_bound")."""
    return (given or "").strip().lower().replace(" ", "_").replace("-", "_")


def reading(lesson: Lesson, ex: Diagnose | Estimate) -> str:
    """What the lesson says about the answer: its version's note and the exercise's discussion."""
    return " ".join(t for t in (lesson.version(ex.version).note, ex.discussion) if t)


# ---------------------------------------------------------------- parts


def _grade_kind(given: str, main: KernelFacts, kernel: Kernel, d: Diagnosis) -> Part:
    top = main.top
    assert top is not None
    weight = WEIGHTS["kind"]
    if not given:
        return Part("kind", "missing", "", "Name what limits the kernel, with one of the conductor's kinds.", 0.0, weight)
    ties = tied(d)
    if given in ties:
        found = main.bottleneck(given)
        assert found is not None
        note = f" The conductor calls it a tie, so either kind is right: {d.uncertain}"
        return Part("kind", "right", given, f"{found.summary}.{note}", 1.0, weight)
    if given == top.kind:
        return Part("kind", "right", given, f"{top.summary}.", 1.0, weight)
    if given not in KINDS:
        return Part("kind", "wrong", given, f"Not one of the conductor's kinds: {', '.join(KINDS)}.", 0.0, weight)
    first = f"{top.kind}: {top.summary}" + (f" (tied with {ties[1]})" if ties else "")
    found = main.bottleneck(given)
    if found is not None:
        credit = 0.5 if found.score >= 0.5 * top.score else 0.25
        message = (
            f"Kernel Lab finds it too ({found.summary}), but it accounts for {found.score:.0%} of the time against"
            f" {top.score:.0%} for {first}. Fix the larger one first."
        )
        return Part("kind", "partly", given, message, credit, weight)
    message = f"Not what the profile shows: {why_not(given, kernel)}. What limits it is {first}."
    return Part("kind", "wrong", given, message, 0.0, weight)


def _grade_limiter(given: str | None, finding: Bottleneck) -> Part:
    expected = finding.limiter or ""
    if not given:
        return Part("limiter", "missing", "", f"Name what limits the occupancy ({', '.join(LIMITERS)}).", 0.0, WEIGHTS["limiter"])
    given = given.strip().lower().replace(" ", "_")
    if given == expected:
        return Part("limiter", "right", given, f"{finding.summary}.", 1.0, WEIGHTS["limiter"])
    return Part(
        "limiter",
        "wrong",
        given,
        f"The occupancy calculator's smallest block limit is set by {expected.replace('_', ' ')}: {finding.summary}.",
        0.0,
        WEIGHTS["limiter"],
    )


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def _expected_text(lesson: Lesson, version: str, kernel: Kernel, file: str, number: int) -> str:
    from kernel_lab.analysis.source import line_text

    text = line_text(kernel, file, number)
    if not text and not file.endswith("cuda.cu"):
        lines = catalog.cell(lesson, version).splitlines()
        text = lines[number - 1] if 0 < number <= len(lines) else ""
    return _norm(text)


def _grade_line(given: int | str | None, finding: Bottleneck, lesson: Lesson, version: str, kernel: Kernel) -> Part:
    lines = [(s, _expected_text(lesson, version, kernel, s.file, s.line)) for s in finding.source_lines]
    first, first_text = lines[0]
    where = f"line {first.line} of {first.file.rsplit('/', 1)[-1]} ({first.share:.0%} of the counter): {first_text}"
    if given is None or given == "":
        return Part("line", "missing", "", "Name the line (its number or a piece of its code).", 0.0, WEIGHTS["line"])
    if isinstance(given, int):
        # a number, in any numbering a student sees: the cell's, the notebook's (the %%profile line counts
        # as line 1) or the report's (for CUDA, load_inline's cuda.cu): compare the texts it points at
        cell = catalog.cell(lesson, version).splitlines()
        candidates = {_norm(cell[n - 1]) for n in (given, given - 1) if 0 < n <= len(cell)}
        candidates.add(_expected_text(lesson, version, kernel, first.file, given))
    else:
        candidates = {_norm(str(given))}

    def hits(expected: str) -> bool:
        return any(c and expected and (c == expected or (len(c) >= 6 and c in expected)) for c in candidates)

    if hits(first_text):
        return Part("line", "right", str(given), f"The conductor points at {where}.", 1.0, WEIGHTS["line"])
    for s, text in lines[1:]:
        if hits(text):
            return Part(
                "line",
                "partly",
                str(given),
                f"That line holds {s.share:.0%} of the counter; the most is on {where}.",
                0.5,
                WEIGHTS["line"],
            )
    return Part("line", "wrong", str(given), f"The {finding.kind} counters point elsewhere: {where}.", 0.0, WEIGHTS["line"])


def _resolve_metric(given: str, kernel: Kernel) -> list[str]:
    name = given.strip()
    low = name.lower()
    if low in ALIASES:
        return list(ALIASES[low])
    if name in kernel.metrics:
        return [name]
    return [m for m in kernel.metrics if m.startswith(name + ".") or m.startswith(name + "_pct") or m.lower() == low]


def _value(kernel: Kernel, metric: str) -> str:
    v = kernel.get(metric)
    if v is None:
        return "not collected"
    return f"{v:,.3g}" if abs(v) < 1000 else f"{v:,.0f}"


def _grade_metric(given: str | None, claim: str, main: KernelFacts, kernel: Kernel) -> Part:
    """The metric against the kind claimed: right only when it supports that kind and the profile shows it."""
    found = main.bottleneck(claim)
    top = main.top
    assert top is not None
    listed = ", ".join([m for m in (found or top).evidence if m in kernel.metrics][:3]) or "see metrics behind the hint"
    listing = f"The evidence for {(found or top).kind} includes: {listed}."
    weight = WEIGHTS["metric"]
    if not given:
        return Part(
            "metric", "missing", "", "Name a metric that shows it (its Nsight Compute name, or a summary column).", 0.0, weight
        )
    names = _resolve_metric(given, kernel)
    if not names and found is not None and given in found.evidence:  # a derived figure of the finding, e.g. n_way
        return Part(
            "metric", "right", given, f"{given} = {found.evidence[given]} is part of the evidence for {claim}.", 1.0, weight
        )
    if not names:
        return Part("metric", "wrong", given, f"No metric of that name in this report. {listing}", 0.0, weight)
    good = [n for n in names if evidence.supports(claim, n, found)]
    shown = ", ".join(f"{n} = {_value(kernel, n)}" for n in (good or names)[:2])
    if good and found is not None:
        return Part("metric", "right", given, f"{shown}: evidence for {claim}.", 1.0, weight)
    ranked = tuple(b.kind for b in main.bottlenecks)
    backed = [k for k in evidence.kinds_backed(names[0], ranked) if k != claim]
    here = [k for k in backed if k in ranked] or backed
    why = f"evidence for {', '.join(here[:3])}, not for {claim}" if here else f"no rule reads it: not for {claim}"
    if good:  # the claimed kind's rule reads it, but the profile does not show that kind
        why += f" (the {claim} rule reads it, but the profile shows no {claim})"
    return Part("metric", "wrong", given, f"{shown}: {why}. {listing}", 0.0, weight)


# ---------------------------------------------------------------- public


def _against(facts: Facts) -> str:
    return f"the report recorded on the {facts.device}" if facts.replay else f"your live profile on the {facts.device}"


def _diagnose(
    lesson: Lesson,
    ex: Diagnose,
    result: Result | None,
    kind: str | None,
    line: int | str | None,
    metric: str | None,
    limiter: str | None,
) -> Feedback:
    work, roof = work_and_roof(lesson, ex.version)
    result = result or catalog.diagnosis(lesson.id, ex.version)
    facts = of_result(result, lesson, ex.version, work, roof)
    main = facts.main
    d = next(d for d in result.diagnoses if d.kernel.name == main.name)
    top = main.top
    if top is None:
        raise KernelLabError(f"The conductor ranks no bottleneck for {main.name}: nothing to grade against.")
    given = kind_name(kind)
    claimed = main.bottleneck(given) if given in tied(d) else top  # a tie: the line and limiter of the kind named
    assert claimed is not None
    parts = [_grade_kind(given, main, d.kernel, d)]
    if ex.ask_limiter or (claimed.kind == "low_occupancy" and limiter):
        parts.append(_grade_limiter(limiter, claimed if claimed.kind == "low_occupancy" else top))
    lines_of = claimed if claimed.source_lines else top
    if ex.ask_line and lines_of.source_lines:
        parts.append(_grade_line(line, lines_of, lesson, ex.version, d.kernel))
    elif line not in (None, ""):
        parts.append(
            Part("line", "right", str(line), f"{top.kind} is about the whole launch, not one line: any answer is fine.", 1.0, 0.0)
        )
    parts.append(_grade_metric(metric, given if given in KINDS else top.kind, main, d.kernel))
    summary = f"{main.name}: {top.summary} (score {top.score:.2f}); {main.label}. {top.hint}"
    return Feedback(f"{lesson.id}.{ex.id}", ex.question, _against(facts), tuple(parts), summary, reading(lesson, ex))


def _estimate(lesson: Lesson, ex: Estimate, result: Result | None, value: float | None) -> Feedback:
    work, roof = work_and_roof(lesson, ex.version)
    result = result or catalog.diagnosis(lesson.id, ex.version)
    facts = of_result(result, lesson, ex.version, work, roof)
    measured = facts.dram_bytes if ex.measure == "dram_bytes" else facts.duration_us
    shown = mb(measured) if ex.unit == "bytes" else f"{measured:,.1f} µs"
    if value is None:
        part = Part("value", "missing", "", "Give your estimate as a number (value=...).", 0.0, 1.0)
    else:
        off = (value - measured) / measured
        given = mb(value) if ex.unit == "bytes" else f"{value:,.1f}"
        if abs(off) <= ex.tolerance:
            part = Part("value", "right", given, f"Measured: {shown} ({off:+.0%} from yours).", 1.0, 1.0)
        elif abs(off) <= 2 * ex.tolerance:
            part = Part(
                "value", "partly", given, f"Close: measured {shown} ({off:+.0%} from yours). Count every pass again.", 0.5, 1.0
            )
        else:
            direction = "more" if off < 0 else "less"
            part = Part(
                "value",
                "wrong",
                given,
                f"Measured: {shown}, {abs(off):.0%} off; the kernels moved {direction} than that. Count every pass again.",
                0.0,
                1.0,
            )
    summary = "; ".join(f"{k.name}: {mb(k.row.get('dram_bytes') or 0)} in {k.duration_us:,.1f} µs" for k in facts.kernels)
    return Feedback(f"{lesson.id}.{ex.id}", ex.question, _against(facts), (part,), summary, reading(lesson, ex))


def answer(
    exercise_id: str,
    kind: str | None = None,
    line: int | str | None = None,
    metric: str | None = None,
    *,
    limiter: str | None = None,
    value: float | None = None,
    result: Result | None = None,
) -> Feedback:
    """Grade a diagnosis (``kind``, ``line``, ``metric``, ``limiter``) or an estimate (``value``).

    ``exercise_id``: e.g. "02_coalescing.diagnose". ``line``: a line number as the profile shows it,
    or a piece of the line's code. ``metric``: an Nsight Compute metric name (with or without its
    rollup, e.g. "dram__bytes_read") or a summary column ("dram_pct"). ``result``: your own
    ``%%profile`` result of the same kernel, to grade against it instead of the recorded report.
    The score is kept in the course's progress file; an empty answer is not an attempt and shows nothing
    of the answer.
    """
    lesson, ex = catalog.exercise(exercise_id)
    if isinstance(ex, Diagnose):
        feedback = _diagnose(lesson, ex, result, kind, line, metric, limiter)
    elif isinstance(ex, Estimate):
        feedback = _estimate(lesson, ex, result, value)
    else:
        raise KernelLabError(
            f"{exercise_id} is a fix exercise.", fix=f'Check your version with course.check("{exercise_id}", "fix_file.py").'
        )
    status = "right" if feedback.correct else "; ".join(f"{p.name} {p.verdict}" for p in feedback.parts if p.verdict != "right")
    if feedback.answered:
        progress.record(exercise_id, feedback.score, status, str(feedback))
    return feedback
