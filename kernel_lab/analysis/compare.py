"""Before/after: what changed between two profiles of a kernel."""

from __future__ import annotations

import math
from dataclasses import dataclass

from kernel_lab import metrics as M
from kernel_lab.models import Diagnosis, Kernel

#: Metrics compared in the "what changed most" table (a learner can read each one).
KEY_METRICS: dict[str, str] = {
    M.DURATION: "duration (ns)",
    M.SM_PCT: "SM throughput (% of peak)",
    M.MEM_PCT: "memory throughput (% of peak)",
    M.DRAM_PCT: "DRAM throughput (% of peak)",
    M.L2_PCT: "L2 throughput (% of peak)",
    M.L1_PCT: "L1/shared throughput (% of peak)",
    M.DRAM_READ: "DRAM bytes read",
    M.DRAM_WRITE: "DRAM bytes written",
    M.ACHIEVED_OCC: "achieved occupancy (%)",
    M.THEORETICAL_OCC: "theoretical occupancy (%)",
    M.REGISTERS: "registers per thread",
    M.SHARED_PER_BLOCK: "shared memory per block (bytes)",
    M.GRID: "grid size (blocks)",
    M.BLOCK: "block size (threads)",
    M.WAVES: "waves per SM",
    M.ISSUE_ACTIVE: "issue slots busy (per cycle)",
    M.SECTORS_EXCESSIVE: "excessive global sectors",
    M.SHARED_LD_CONFLICTS: "shared-load bank conflicts",
    M.SHARED_ST_CONFLICTS: "shared-store bank conflicts",
    M.THREADS_PER_INST: "active threads per instruction",
    M.SPILL_REQUESTS: "register spill requests",
}


@dataclass(frozen=True)
class MetricChange:
    metric: str
    label: str
    before: float
    after: float

    @property
    def change(self) -> float:
        """Relative change, (after - before) / before (inf when it appears from zero)."""
        if self.before == 0:
            return math.inf if self.after else 0.0
        return (self.after - self.before) / abs(self.before)


@dataclass(frozen=True)
class Comparison:
    """Two versions of a kernel side by side."""

    before: Diagnosis
    after: Diagnosis
    changes: tuple[MetricChange, ...]  # largest relative change first
    disappeared: tuple[str, ...]  # bottleneck kinds gone in `after`
    appeared: tuple[str, ...]  # bottleneck kinds new in `after`

    @property
    def speedup(self) -> float | None:
        """Duration before / duration after (> 1 is faster)."""
        b, a = self.before.kernel.get(M.DURATION), self.after.kernel.get(M.DURATION)
        return b / a if b and a else None


def _changes(before: Kernel, after: Kernel, top: int) -> tuple[MetricChange, ...]:
    found = [
        MetricChange(m, label, before.value(m), after.value(m))
        for m, label in KEY_METRICS.items()
        if before.has(m) and after.has(m) and (before.value(m) or after.value(m))
    ]
    found = [c for c in found if abs(c.change) >= 0.01]
    found.sort(key=lambda c: -min(abs(c.change), 1e9))
    return tuple(found[:top])


def compare(before: Diagnosis, after: Diagnosis, top: int = 12) -> Comparison:
    """Compare two diagnosed kernels (two versions of one kernel, or any two)."""
    kinds_before = [b.kind for b in before.bottlenecks]
    kinds_after = [b.kind for b in after.bottlenecks]
    return Comparison(
        before=before,
        after=after,
        changes=_changes(before.kernel, after.kernel, top),
        disappeared=tuple(k for k in kinds_before if k not in kinds_after),
        appeared=tuple(k for k in kinds_after if k not in kinds_before),
    )
