"""What the judge decides about a candidate: correct or not and why, what blocks it, how fast it is."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from kernel_lab.verify.findings import Finding

#: A speedup counts only when the interquartile ranges do not overlap and it is larger than this.
MIN_SIGNIFICANT_CHANGE = 0.02


def quartiles(samples: Sequence[float]) -> tuple[float, float, float]:
    if len(samples) < 2:
        return (samples[0],) * 3
    q1, q2, q3 = statistics.quantiles(samples, n=4, method="inclusive")
    return q1, q2, q3


@dataclass(frozen=True)
class Timing:
    """Medians and interquartile ranges (ms) of the reference and the candidate on one shape, timed interleaved."""

    reference_ms: float
    candidate_ms: float
    reference_spread: float
    candidate_spread: float
    speedup: float  # reference_ms / candidate_ms
    significant: bool  # the IQRs do not overlap and the speedup differs from 1 by more than 2%
    repeats: int
    shape: tuple = ()

    @classmethod
    def from_samples(cls, reference: Sequence[float], candidate: Sequence[float], shape: tuple = ()) -> Timing:
        r1, r2, r3 = quartiles(reference)
        c1, c2, c3 = quartiles(candidate)
        speedup = r2 / c2 if c2 > 0 else float("inf")
        apart = r1 > c3 or c1 > r3
        return cls(
            r2,
            c2,
            r3 - r1,
            c3 - c1,
            speedup,
            apart and abs(speedup - 1) > MIN_SIGNIFICANT_CHANGE,
            min(len(reference), len(candidate)),
            shape,
        )


@dataclass(frozen=True)
class Verdict:
    """Whether a candidate is correct (``reason`` says why not, or "ok"; ``failure`` is its kind, one of
    :data:`kernel_lab.verify.findings.FAILURES`), what blocks it, how fast it is.

    ``warnings`` block the candidate: it is never chosen as the best version or offered for Apply until the
    user confirms it. ``notes`` only inform (what could not be checked, input sets skipped). Both are typed
    findings: switch on their ``kind``, show their ``text``.
    """

    correct: bool
    reason: str
    warnings: tuple[Finding, ...] = ()
    max_abs_err: float | None = None
    max_rel_err: float | None = None
    checks: int = 0  # input sets compared
    timing: Timing | None = None  # the headline: the largest declared shape
    shapes: tuple[Timing, ...] = ()  # every declared shape
    notes: tuple[Finding, ...] = ()
    failure: str | None = None  # why it is not correct, as a kind

    @property
    def flagged(self) -> bool:
        return bool(self.warnings)

    @property
    def worst(self) -> Timing | None:
        """The shape on which the candidate does worst against the reference."""
        return min(self.shapes, key=lambda t: t.speedup) if self.shapes else None

    def summary(self) -> str:
        """One line: "correct, 1.84× faster (...)", or "wrong: <reason>"."""
        if not self.correct:
            return f"wrong: {self.reason}"
        text = f"correct on {self.checks} input sets (max relative error {self.max_rel_err or 0:.1e})"
        t = self.timing
        if t is not None:
            change = f"{t.speedup:.2f}× faster" if t.speedup >= 1 else f"{1 / t.speedup:.2f}× slower"
            noise = "" if t.significant else ", within noise"
            text += f", {change} ({t.reference_ms:.3g} → {t.candidate_ms:.3g} ms{noise})"
        if self.warnings:
            text += f"; {len(self.warnings)} warning{'s' if len(self.warnings) > 1 else ''}: blocked until you confirm it"
        return text
