"""The turn after an answer, as the model reads it: the judge's verdict in full, and for a correct candidate its own
profile's diagnosis; what the answer's harness changes came to; how it stands against the best version so far."""

from __future__ import annotations

import re

from kernel_lab.rewrite.base import Feedback, Profiled, Timed
from kernel_lab.rewrite.prompts import bottleneck

CONTEXT_LINES = 2  # lines of the candidate shown either side of the line an error names
NEXT = (
    "Answer with the whole cell again in one ```python block, then a short explanation naming the bottleneck kind it addresses."
)


CPU = "(Timed by Triton's CPU interpreter, not on a GPU: launch options such as num_warps change nothing here.)"


def feedback_message(feedback: Feedback, best: tuple[str, float | None], harness: str = "", interpreted: bool = False) -> str:
    """What the model is told about its candidate: ``best`` is the best version so far (label, speedup), ``harness``
    what :class:`~kernel_lab.rewrite.harness.Kept` said; ``interpreted``: timed by Triton's CPU interpreter."""
    parts = [_verdict(feedback), harness]
    if feedback.correct:
        speed = _timing(feedback, best) + (f"\n{CPU}" if interpreted and feedback.timing is not None else "")
        parts += [speed, _findings("Warnings (they block it)", feedback.warnings)]
        parts += [_findings("Notes", feedback.notes)]
        parts.append(_profile(feedback.profiled) if feedback.profiled is not None else "")
    parts.append(NEXT)
    return "\n\n".join(p for p in parts if p)


def _verdict(feedback: Feedback) -> str:
    head = f"## The judge's verdict on your cell ({feedback.version})"
    if feedback.correct:
        compared = f" on {feedback.checks} input sets" if feedback.checks else ""
        error = f" (max relative error {feedback.max_rel_err:.1e})" if feedback.max_rel_err is not None else ""
        return f"{head}\nCorrect{compared}{error}."
    kind = f"{feedback.failure} ({feedback.failure_words})" if feedback.failure else "wrong or failed"
    return f"{head}\nNot correct: {kind}.\n{feedback.reason}" + _named_lines(feedback.reason, feedback.source)


def _named_lines(reason: str, source: str) -> str:
    """The lines of the candidate around the line an error names ('at line 17'), numbered as the model sent them."""
    found = re.search(r"\bline (\d+)", reason)
    lines = source.splitlines()
    if found is None or not 1 <= int(found[1]) <= len(lines):
        return ""
    at = int(found[1])
    shown = range(max(1, at - CONTEXT_LINES), min(len(lines), at + CONTEXT_LINES) + 1)
    numbered = "\n".join(f"{'>' if n == at else ' '}{n:4d}| {lines[n - 1]}" for n in shown)
    return f"\nYour cell around line {at}:\n```\n{numbered}\n```"


def _times(t: Timed) -> str:
    return (
        f"{t.time_ms:.4g} ms (spread {t.spread_ms:.2g} ms) against the original's {t.reference_ms:.4g} ms "
        f"(spread {t.reference_spread_ms:.2g} ms), timed interleaved in one run"
    )


def _timing(feedback: Feedback, best: tuple[str, float | None]) -> str:
    t = feedback.timing
    if t is None:
        return "## Speed\nNot timed."
    if not t.significant:
        said = f"{t.speedup:.2f}x: within noise, no faster than the original"
    else:
        said = f"{t.speedup:.2f}x faster than the original" if t.speedup > 1 else f"{1 / t.speedup:.2f}x slower than the original"
    label, speedup = best
    if speedup is not None and label != feedback.version and t.speedup <= speedup:
        said += f"; slower than the best version so far, {label} at {speedup:.2f}x: do better than that"
    elif speedup is not None and label == feedback.version:
        said += ": the best version so far"
    return f"## Speed\n{_times(t)}: {said}."


def _findings(title: str, found: tuple[tuple[str, str], ...]) -> str:
    if not found:
        return ""
    return f"## {title}\n" + "\n".join(f"- {kind}: {text}" for kind, text in found)


def _profile(p: Profiled) -> str:
    if not p.bottlenecks:
        return f"## Its profile\n{p.note or 'No profile.'}"
    ranked = "\n".join(bottleneck(i, b) for i, b in enumerate(p.bottlenecks, 1))
    lines = ["## Its profile", p.note, f"The top kernel runs at {p.roof}." if p.roof else "", ranked, p.cell]
    if p.at_roof:
        lines.append("It is at its roof: little is left to gain.")
    return "\n".join(line for line in lines if line)
