"""Verification: is a candidate version of a cell correct, and is it faster? (No torch imported here.)

``verify(reference_source, candidate_source)`` returns a :class:`Verdict`; the work happens in a
subprocess (:mod:`kernel_lab.verify.sandbox`, started by :mod:`kernel_lab.verify.workers`) so a hanging or crashing candidate cannot take the caller down.
"""

from __future__ import annotations

from kernel_lab.verify.findings import Finding
from kernel_lab.verify.judge import Judge, Judging, Options, Phase, verify
from kernel_lab.verify.verdict import Timing, Verdict

__all__ = ["Finding", "Judge", "Judging", "Options", "Phase", "Timing", "Verdict", "verify"]
