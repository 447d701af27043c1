"""Judge a candidate version of a cell against the reference version: correct, and how fast.

Candidates may be wrong, hang, crash or cheat, so they run in a worker subprocess
(:mod:`kernel_lab.verify.worker`) with a timeout; whatever happens comes back as a
:class:`Verdict`, never as an exception. No torch is imported here.
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from kernel_lab import processes
from kernel_lab.processes import child_env, signal_name
from kernel_lab.settings import Settings

#: A speedup above this is flagged for a second look.
SUSPICIOUS_SPEEDUP = 10.0
#: A speedup counts only when the interquartile ranges do not overlap and it is larger than this.
MIN_SIGNIFICANT_CHANGE = 0.02


def _quartiles(samples: Sequence[float]) -> tuple[float, float, float]:
    if len(samples) < 2:
        return (samples[0],) * 3
    q1, q2, q3 = statistics.quantiles(samples, n=4, method="inclusive")
    return q1, q2, q3


@dataclass(frozen=True)
class Timing:
    """Medians and interquartile ranges (ms) of the reference and the candidate, timed interleaved."""

    reference_ms: float
    candidate_ms: float
    reference_spread: float
    candidate_spread: float
    speedup: float  # reference_ms / candidate_ms
    significant: bool  # the IQRs do not overlap and the speedup differs from 1 by more than 2%
    repeats: int

    @classmethod
    def from_samples(cls, reference: Sequence[float], candidate: Sequence[float]) -> Timing:
        r1, r2, r3 = _quartiles(reference)
        c1, c2, c3 = _quartiles(candidate)
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
        )


@dataclass(frozen=True)
class Verdict:
    """Whether a candidate is correct (``reason`` says why not, or "ok"), what to look at, how fast."""

    correct: bool
    reason: str
    warnings: tuple[str, ...] = ()
    max_abs_err: float | None = None
    max_rel_err: float | None = None
    checks: int = 0  # input sets compared
    timing: Timing | None = None

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
            text += f"; {len(self.warnings)} warning{'s' if len(self.warnings) > 1 else ''}"
        return text


def _progress(path: Path) -> tuple[str, str]:
    """(who, where) of the step the worker was in: ("verifier", "while starting") before any."""
    try:
        who, where = path.read_text().split("\t", 1)
        return who, where
    except (OSError, ValueError):
        return "verifier", "while starting"


def _last_line(log: Path) -> str:
    lines = [s.strip() for s in log.read_text(errors="replace").splitlines() if s.strip()]
    return lines[-1][:300] if lines else ""


def _from_result(data: dict) -> Verdict:
    samples = data.get("samples")
    timing = Timing.from_samples(samples["reference"], samples["candidate"]) if samples else None
    warnings = list(data["warnings"])
    if timing is not None and timing.speedup > SUSPICIOUS_SPEEDUP:
        warnings.append(
            f"The candidate is {timing.speedup:.1f}× faster than the reference: a speedup over "
            f"{SUSPICIOUS_SPEEDUP:g}× deserves a second look (does it really do all the work?)."
        )
    return Verdict(
        data["correct"], data["reason"], tuple(warnings), data["max_abs_err"], data["max_rel_err"], data["checks"], timing
    )


def _worker_env(device: str | None) -> dict[str, str]:
    env = child_env(
        # keep freed host memory in malloc's heap, where poisoned blocks are handed out again
        MALLOC_MMAP_THRESHOLD_=str(32 << 20),
        MALLOC_TRIM_THRESHOLD_=str(1 << 40),
    )
    if device == "cpu":
        env.update(CUDA_VISIBLE_DEVICES="", TRITON_INTERPRET="1")
    return env


def _run(command: list[str], env: dict[str, str], timeout: float, log: Path) -> int | None:
    """The worker's exit status, or None when it ran past ``timeout``; its whole process group is killed."""
    done = processes.run(command, env=env, timeout=timeout)
    log.write_text(done.stdout + done.stderr)
    return done.code


def verify(
    reference_source: str,
    candidate_source: str,
    *,
    seeds: int = 3,
    rtol: float | None = None,
    atol: float | None = None,
    time: bool = True,
    timeout: float = 120.0,
    device: str | None = None,
) -> Verdict:
    """Judge ``candidate_source`` against ``reference_source`` (whole cells) in a subprocess.

    The reference cell's ``run`` defines the expected result and its ``SHAPES``/``make_inputs`` the
    inputs (``seeds`` input sets per shape). ``rtol``/``atol`` override the dtype-aware defaults;
    ``time`` times both versions when the candidate is correct; ``timeout`` (s) bounds the whole
    judgement; ``device`` ("cpu", "cuda", "cuda:1") defaults to the GPU when there is one.
    A candidate that fails, hangs or crashes gives ``correct=False`` with the reason, never an exception.
    """
    if seeds < 1:
        raise ValueError(f"seeds must be at least 1, not {seeds}")
    with tempfile.TemporaryDirectory(prefix="kernel_lab_verify_") as tmp:
        work = Path(tmp)
        (work / "reference.py").write_text(reference_source)
        (work / "candidate.py").write_text(candidate_source)
        result, progress, log = work / "result.json", work / "progress.txt", work / "log.txt"
        command = [
            sys.executable,
            "-m",
            "kernel_lab.verify.worker",
            str(work / "reference.py"),
            str(work / "candidate.py"),
            str(result),
            "--seeds",
            str(seeds),
            "--progress",
            str(progress),
        ]
        command += ["--rtol", str(rtol)] * (rtol is not None) + ["--atol", str(atol)] * (atol is not None)
        command += (["--device", device] if device is not None else []) + ["--no-time"] * (not time)
        status = _run(command, _worker_env(device), timeout, log)
        who, where = _progress(progress)
        if status is None:
            return Verdict(False, f"the {who} did not finish within {timeout:g} s {where}")
        if status < 0:
            return Verdict(False, f"the {who} crashed ({signal_name(-status)}) {where}")
        if status != 0 or not result.exists():
            last = _last_line(log)
            reason = f"the {who} ended the process with exit status {status} {where}"
            return Verdict(False, reason + (f": {last}" if last else ""))
        return _from_result(json.loads(result.read_text()))


class Judge:
    """Judges candidates against one reference cell with the same settings (what the optimize loop holds)."""

    def __init__(self, reference_source: str, settings: Settings, device: str | None = None) -> None:
        self.reference_source = reference_source
        self.settings = settings
        self.device = device

    def check(self, candidate_source: str) -> Verdict:
        s = self.settings
        return verify(
            self.reference_source,
            candidate_source,
            seeds=s.seeds,
            rtol=s.rtol,
            atol=s.atol,
            timeout=s.verify_timeout,
            device=self.device,
        )
