"""What the judge finds, as kinds other rooms switch on (the loop, the course, the panel, the LLM's feedback) and a
sentence for a person: never parse the sentence.

A :class:`Finding` is a warning (it blocks a correct candidate until the user confirms it) or a note (it only
informs). A failed verdict carries one failure kind (:data:`FAILURES`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

#: warnings: a correct candidate with one of these waits for the user's second look
WARNINGS = {
    "suspicious_speedup": "faster than a changed kernel plausibly is",
    "fallback": "its time is spent outside its own kernels",
    "foreign_ops": "it computes with PyTorch operators the reference does not use",
    "library_call": "it calls library matrix-multiply or convolution routines the reference does not",
    "untrusted_clock": "its process's timings are not borne out by the judge's clock",
    "hidden_work": "work the CUDA events do not see (another stream)",
    "above_roof": "its timing would need more than the GPU's memory bandwidth",
    "slower_shape": "much slower on another declared shape",
    "stray_threads": "it leaves threads running after run() returns",
    "stray_processes": "it leaves processes running after run() returns",
    "outside_calls": "it spends time outside its timed calls that the reference does not (work out of the clock)",
    "uneven_calls": "one call of each timed batch does the work of all",
}
#: notes: they inform and block nothing
NOTES = {
    "single_shape": "only one input shape could be checked",
    "skipped_inputs": "an input set the reference is not defined on was skipped",
    "host_bound_shape": "slower on a shape where a call costs mostly its launch",
    "truth_skipped": "no answer more precise than the reference's could be made (it pins its output dtype)",
}
#: why a verdict is "wrong or failed", one kind each
FAILURES = {
    "compile_error": "the cell does not compile (syntax, or Triton's compiler)",
    "load_error": "the cell raised while loading",
    "runtime_error": "run() raised",
    "cannot_run": "the CPU interpreter cannot run a construct of the cell",
    "out_of_memory": "it ran out of the device's memory",
    "timeout": "it did not finish in time",
    "crash": "its process crashed or exited",
    "protocol": "its process broke the judge's protocol (a changed harness)",
    "wrong_values": "its outputs differ from the reference's beyond the tolerance",
    "nan_mismatch": "NaN or inf where the reference has numbers, or the other way round (unwritten elements)",
    "wrong_shape": "an output of another shape, dtype or count than the reference's",
    "lower_precision": "further from the float64 truth than the reference: it computes in a lower precision",
    "changed_input": "it changed an input the reference leaves alone",
    "aliased_output": "an output that is a view of an input",
    "reused_buffer": "the same buffer returned by every call",
    "wrong_layout": "an output laid out (strides, device) unlike the reference's",
    "stale_when_timed": "its outputs during timing differ from the reference's (right only when checked)",
    "broken_reference": "the reference itself cannot be judged against",
    "too_slow": "the reference is too slow for Triton's CPU interpreter to judge a candidate in its time",
}


@dataclass(frozen=True)
class Finding:
    """One thing the judge found: its kind (a key of :data:`WARNINGS` or :data:`NOTES`), a sentence for a person,
    and the numbers behind it."""

    kind: str
    text: str
    data: Mapping[str, Any] = field(default_factory=dict)

    def __str__(self) -> str:
        return self.text


def texts(findings: tuple[Finding, ...] | list[Finding]) -> list[str]:
    return [f.text for f in findings]


def kinds(findings: tuple[Finding, ...] | list[Finding]) -> list[str]:
    return [f.kind for f in findings]
