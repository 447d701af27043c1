"""Which metrics back which bottleneck kind: the one place the course decides whether the metric of an answer
is evidence for the kind it claims.

A metric supports a kind when the conductor's rule for that kind declares it (``NEEDS`` or ``READS``,
wildcards included; not the device attributes that every rule may read), when the kind's finding in the
report lists it among its evidence, or when a lesson's own argument for the kind uses it
(:data:`LESSONS_ARGUE`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kernel_lab import metrics as M
from kernel_lab.analysis.rules import ALWAYS_READABLE, rules

if TYPE_CHECKING:
    from kernel_lab.models import Bottleneck

#: Metrics a lesson's argument uses for a kind beyond what the kind's rule declares.
LESSONS_ARGUE: dict[str, tuple[str, ...]] = {
    # lessons 1, 8 and 10: DRAM far from its peak, because too few bytes are in flight, is what latency-bound means
    "latency_bound": (M.DRAM_PCT,),
}


def supports(kind: str, metric: str, finding: Bottleneck | None = None) -> bool:
    """Whether ``metric`` (an Nsight Compute name) is evidence for ``kind``; ``finding``: the kind's finding in
    the report, whose evidence counts too."""
    if (finding is not None and metric in finding.evidence) or metric in LESSONS_ARGUE.get(kind, ()):
        return True
    if metric.startswith(ALWAYS_READABLE):
        return False
    return any(r.kind == kind and r.declares(metric) for r in rules())


def kinds_backed(metric: str, first: tuple[str, ...] = ()) -> list[str]:
    """The kinds ``metric`` supports: those of ``first`` (e.g. the report's findings) first, then the others."""
    every = [r.kind for r in rules()]
    order = [*first, *(k for k in every if k not in first)]
    return [k for k in order if supports(k, metric)]
