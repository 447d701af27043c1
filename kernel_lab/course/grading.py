"""Grading a diagnosis: the student names what limits a kernel, on which line, with which metric as
evidence, and the answer is checked against the report (recorded, or the student's live profile) and
the conductor's ranking. Every wrong part is explained with the report's own numbers."""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kernel_lab import metrics as M
from kernel_lab.course import catalog, progress
from kernel_lab.course.facts import Facts, KernelFacts, mb, of_result, work_and_roof
from kernel_lab.course.model import Diagnose, Estimate, Lesson
from kernel_lab.display.html import boxed
from kernel_lab.models import KINDS, LIMITERS

if TYPE_CHECKING:
    from kernel_lab.models import Bottleneck, Kernel
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


@dataclass(frozen=True)
class Part:
    """One graded part of an answer."""

    name: str  # kind, limiter, line, metric, value
    verdict: str  # right, partly, wrong, missing
    given: str
    message: str
    credit: float  # 0..1
    weight: float


@dataclass(frozen=True)
class Feedback:
    """The graded answer: a score out of 100 and, for each part, right or why not."""

    exercise: str
    question: str
    against: str  # what it was checked against
    parts: tuple[Part, ...]
    summary: str  # what the profile says, in the conductor's words

    @property
    def score(self) -> int:
        total = sum(p.weight for p in self.parts)
        return round(100 * sum(p.credit * p.weight for p in self.parts) / total) if total else 0

    @property
    def correct(self) -> bool:
        return all(p.verdict == "right" for p in self.parts)

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(str(self))

    def __str__(self) -> str:
        lines = [f"{self.exercise}: {self.score}/100 (checked against {self.against})"]
        for p in self.parts:
            lines.append(f"  [{p.verdict.upper():7s}] {p.name} = {p.given or '(none)'}: {p.message}")
        lines.append(f"  The profile: {self.summary}")
        return "\n".join(lines)

    @boxed
    def _repr_html_(self) -> str:
        color = {"right": "#2e7d32", "partly": "#ef6c00", "wrong": "#c62828", "missing": "#757575"}
        rows = "".join(
            f"<tr><td><b style='color:{color.get(p.verdict, '#000')}'>{p.verdict}</b></td><td>{html.escape(p.name)}</td>"
            f"<td><code>{html.escape(p.given or '(none)')}</code></td><td>{html.escape(p.message)}</td></tr>"
            for p in self.parts
        )
        return (
            f"<div><p><b>{html.escape(self.exercise)}</b>: <b>{self.score}/100</b> "
            f"<small>(checked against {html.escape(self.against)})</small></p>"
            f"<table class='text'>{rows}</table><p><i>The profile:</i> {html.escape(self.summary)}</p></div>"
        )


# ---------------------------------------------------------------- why a kind does not fit


def _pct(k: Kernel, metric: str) -> str:
    v = k.get(metric)
    return "not collected" if v is None else f"{v:.0f}%"


def why_not(kind: str, k: Kernel) -> str:
    """What the kernel's metrics show against ``kind``, in words."""
    sm, mem = k.get(M.SM_PCT), k.get(M.MEM_PCT)
    if kind == "memory_bound":
        return (
            f"memory throughput is {_pct(k, M.MEM_PCT)} of peak and the SMs are {_pct(k, M.SM_PCT)} busy; a memory-bound kernel"
            " keeps some memory unit near its peak (the conductor asks for at least 60%, and more than the SMs)"
        )
    if kind == "compute_bound":
        return (
            f"the SMs are {_pct(k, M.SM_PCT)} busy and memory {_pct(k, M.MEM_PCT)}; a compute-bound kernel keeps the SMs busier"
            " than memory and above 60% of their peak"
        )
    if kind == "latency_bound":
        busiest = "memory" if (mem or 0) >= (sm or 0) else "the SMs"
        return (
            f"{busiest} run at {max(sm or 0, mem or 0):.0f}% of peak: a latency-bound kernel leaves both the SMs and memory"
            " under 60%, so one of the roofs is close and latency is not the first limit"
        )
    if kind == "low_occupancy":
        return (
            f"theoretical occupancy is {_pct(k, M.THEORETICAL_OCC)} (achieved {_pct(k, M.ACHIEVED_OCC)}); the conductor reports"
            " low occupancy under 80% theoretical, and only when more warps could help"
        )
    if kind == "uncoalesced_global":
        total, excess = k.get(M.SECTORS_GLOBAL), k.get(M.SECTORS_EXCESSIVE)
        if total and excess is not None:
            return f"only {excess / total:.0%} of the global-memory sectors fetched were not needed (the conductor reports 10% or more)"
        return "the report shows no wasted global-memory sectors"
    if kind == "shared_bank_conflicts":
        waves = (k.get(M.SHARED_LD_WAVEFRONTS) or 0) + (k.get(M.SHARED_ST_WAVEFRONTS) or 0)
        if not waves:
            return "the kernel does not use shared memory explicitly, so there are no bank conflicts to speak of"
        conflicts = (k.get(M.SHARED_LD_CONFLICTS) or 0) + (k.get(M.SHARED_ST_CONFLICTS) or 0)
        return f"{conflicts / waves:.0%} of shared-memory wavefronts are conflicts (the conductor reports 10% or more)"
    if kind == "small_grid":
        return f"the grid has {k.get(M.GRID) or 0:.0f} blocks for {k.get(M.SM_COUNT) or 0:.0f} SMs: every SM gets work"
    if kind == "tail_effect":
        return f"the grid runs in {k.get(M.WAVES) or 0:.2f} waves; a tail effect needs a last wave that leaves many SMs idle"
    if kind == "warp_divergence":
        return f"on average {k.get(M.THREADS_PER_INST) or 32:.1f} of 32 threads are active per instruction"
    if kind == "register_spills":
        return f"the kernel makes {k.get(M.SPILL_REQUESTS) or 0:,.0f} register-spill requests to local memory"
    if kind == "tensor_cores_unused":
        return "the instruction mix does not show matrix-multiply work on the FMA units with the tensor cores idle"
    if kind == "launch_overhead":
        return f"the kernel runs {(k.get(M.DURATION) or 0) / 1000:.1f} µs, far longer than the few µs a launch costs"
    return "the conductor does not find it in this report"


# ---------------------------------------------------------------- parts


def _grade_kind(given: str | None, main: KernelFacts, kernel: Kernel) -> Part:
    top = main.top
    assert top is not None
    if not given:
        return Part(
            "kind", "missing", "", "Name what limits the kernel, with one of the conductor's kinds.", 0.0, WEIGHTS["kind"]
        )
    given = given.strip().lower().replace(" ", "_").replace("-", "_")
    if given == top.kind:
        return Part("kind", "right", given, f"{top.summary}.", 1.0, WEIGHTS["kind"])
    if given not in KINDS:
        return Part("kind", "wrong", given, f"Not one of the conductor's kinds: {', '.join(KINDS)}.", 0.0, WEIGHTS["kind"])
    found = main.bottleneck(given)
    if found is not None:
        credit = 0.5 if found.score >= 0.5 * top.score else 0.25
        return Part(
            "kind",
            "partly",
            given,
            f"Kernel Lab finds it too ({found.summary}), but it accounts for {found.score:.0%} of the time against"
            f" {top.score:.0%} for {top.kind}: {top.summary}. Fix the larger one first.",
            credit,
            WEIGHTS["kind"],
        )
    return Part(
        "kind",
        "wrong",
        given,
        f"Not what the profile shows: {why_not(given, kernel)}. What limits it is {top.kind}: {top.summary}.",
        0.0,
        WEIGHTS["kind"],
    )


def _grade_limiter(given: str | None, top: Bottleneck) -> Part:
    expected = top.limiter or ""
    if not given:
        return Part("limiter", "missing", "", f"Name what limits the occupancy ({', '.join(LIMITERS)}).", 0.0, WEIGHTS["limiter"])
    given = given.strip().lower().replace(" ", "_")
    if given == expected:
        return Part("limiter", "right", given, f"{top.summary}.", 1.0, WEIGHTS["limiter"])
    return Part(
        "limiter",
        "wrong",
        given,
        f"The occupancy calculator's smallest block limit is set by {expected.replace('_', ' ')}: {top.summary}.",
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


def _grade_line(given: int | str | None, top: Bottleneck, lesson: Lesson, version: str, kernel: Kernel) -> Part:
    lines = [(s, _expected_text(lesson, version, kernel, s.file, s.line)) for s in top.source_lines]
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
    return Part("line", "wrong", str(given), f"The {top.kind} counters point elsewhere: {where}.", 0.0, WEIGHTS["line"])


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


def _grade_metric(given: str | None, top: Bottleneck, kernel: Kernel) -> Part:
    from kernel_lab.analysis.rules import rules

    rule = next((r for r in rules() if r.kind == top.kind), None)
    evidence = [m for m in top.evidence if m in kernel.metrics]
    if not given:
        return Part(
            "metric",
            "missing",
            "",
            "Name a metric that shows it (its Nsight Compute name, or a summary column).",
            0.0,
            WEIGHTS["metric"],
        )
    names = _resolve_metric(given, kernel)
    if not names and given in top.evidence:
        return Part(
            "metric",
            "right",
            given,
            f"{given} = {top.evidence[given]} is part of the evidence for {top.kind}.",
            1.0,
            WEIGHTS["metric"],
        )
    if not names:
        return Part(
            "metric",
            "wrong",
            given,
            f"No metric of that name in this report. The evidence for {top.kind} includes: {', '.join(evidence[:4]) or 'see metrics behind the hint'}.",
            0.0,
            WEIGHTS["metric"],
        )
    good = [n for n in names if n in top.evidence or (rule is not None and rule.declares(n))]
    shown = ", ".join(f"{n} = {_value(kernel, n)}" for n in (good or names)[:2])
    if good:
        return Part("metric", "right", given, f"{shown}: evidence the {top.kind} rule reads.", 1.0, WEIGHTS["metric"])
    other = [r.kind for r in rules() if r.kind != top.kind and any(r.declares(n) for n in names)]
    why = f" it is evidence for {', '.join(other[:3])}" if other else " no rule reads it"
    return Part(
        "metric",
        "wrong",
        given,
        f"{shown}:{why}, not for {top.kind}. The evidence for {top.kind} includes: {', '.join(evidence[:4])}.",
        0.0,
        WEIGHTS["metric"],
    )


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
    kernel = next(d.kernel for d in result.diagnoses if d.kernel.name == main.name)
    top = main.top
    if top is None:
        raise ValueError(f"The conductor ranks no bottleneck for {main.name}: nothing to grade against.")
    parts = [_grade_kind(kind, main, kernel)]
    if ex.ask_limiter or (top.kind == "low_occupancy" and limiter):
        parts.append(_grade_limiter(limiter, top))
    if ex.ask_line and top.source_lines:
        parts.append(_grade_line(line, top, lesson, ex.version, kernel))
    elif line not in (None, ""):
        parts.append(
            Part("line", "right", str(line), f"{top.kind} is about the whole launch, not one line: any answer is fine.", 1.0, 0.0)
        )
    parts.append(_grade_metric(metric, top, kernel))
    summary = f"{main.name}: {top.summary} (score {top.score:.2f}); {main.label}."
    return Feedback(f"{lesson.id}.{ex.id}", ex.question, _against(facts), tuple(parts), summary)


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
    return Feedback(f"{lesson.id}.{ex.id}", ex.question, _against(facts), (part,), summary)


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
    The score is kept in the course's progress file.
    """
    lesson, ex = catalog.exercise(exercise_id)
    if isinstance(ex, Diagnose):
        feedback = _diagnose(lesson, ex, result, kind, line, metric, limiter)
    elif isinstance(ex, Estimate):
        feedback = _estimate(lesson, ex, result, value)
    else:
        raise TypeError(f"{exercise_id} is a fix exercise: check your version with course.check({exercise_id!r}, source).")
    status = "right" if feedback.correct else "; ".join(f"{p.name} {p.verdict}" for p in feedback.parts if p.verdict != "right")
    if any(p.verdict != "missing" for p in feedback.parts):  # an empty answer is not an attempt
        progress.record(exercise_id, feedback.score, status, str(feedback))
    return feedback
