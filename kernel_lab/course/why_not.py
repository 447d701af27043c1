"""Why a kind does not fit a kernel, in words and with the report's numbers; every threshold it states is the
rule's own named constant, so the prose cannot drift from what the conductor does."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kernel_lab import metrics as M
from kernel_lab.analysis.rules import (
    compute_bound,
    latency_bound,
    low_occupancy,
    memory_bound,
    shared_bank_conflicts,
    uncoalesced_global,
)

if TYPE_CHECKING:
    from kernel_lab.models import Kernel


def _pct(k: Kernel, metric: str) -> str:
    v = k.get(metric)
    return "not collected" if v is None else f"{v:.0f}%"


def _regime(kind: str, k: Kernel) -> str | None:
    sm, mem = k.get(M.SM_PCT), k.get(M.MEM_PCT)
    if kind == "memory_bound":
        return (
            f"memory throughput is {_pct(k, M.MEM_PCT)} of peak and the SMs are {_pct(k, M.SM_PCT)} busy; a memory-bound kernel"
            f" keeps some memory unit near its peak (the conductor asks for at least {memory_bound.MIN_MEMORY_PCT:.0f}%,"
            " and more than the SMs)"
        )
    if kind == "compute_bound":
        return (
            f"the SMs are {_pct(k, M.SM_PCT)} busy and memory {_pct(k, M.MEM_PCT)}; a compute-bound kernel keeps the SMs busier"
            f" than memory and above {compute_bound.MIN_SM_PCT:.0f}% of their peak"
        )
    if kind == "latency_bound":
        busiest = "memory" if (mem or 0) >= (sm or 0) else "the SMs"
        return (
            f"{busiest} run at {max(sm or 0, mem or 0):.0f}% of peak: a latency-bound kernel leaves both the SMs and memory"
            f" under {latency_bound.BUSY_PCT:.0f}%, so one of the roofs is close and latency is not the first limit"
        )
    return None


def _cause(kind: str, k: Kernel) -> str | None:
    if kind == "low_occupancy":
        return (
            f"theoretical occupancy is {_pct(k, M.THEORETICAL_OCC)} (achieved {_pct(k, M.ACHIEVED_OCC)}); the conductor reports"
            f" low occupancy under {low_occupancy.THRESHOLD_PCT:.0f}% theoretical, and only when more warps could help"
        )
    if kind == "uncoalesced_global":
        total, excess = k.get(M.SECTORS_GLOBAL), k.get(M.SECTORS_EXCESSIVE)
        if total and excess is not None:
            return (
                f"only {excess / total:.0%} of the global-memory sectors fetched were not needed (the conductor reports"
                f" {uncoalesced_global.MIN_EXCESSIVE:.0%} or more)"
            )
        return "the report shows no wasted global-memory sectors"
    if kind == "shared_bank_conflicts":
        waves = (k.get(M.SHARED_LD_WAVEFRONTS) or 0) + (k.get(M.SHARED_ST_WAVEFRONTS) or 0)
        if not waves:
            return "the kernel does not use shared memory explicitly, so there are no bank conflicts to speak of"
        conflicts = (k.get(M.SHARED_LD_CONFLICTS) or 0) + (k.get(M.SHARED_ST_CONFLICTS) or 0)
        return (
            f"{conflicts / waves:.0%} of shared-memory wavefronts are conflicts (the conductor reports"
            f" {shared_bank_conflicts.MIN_CONFLICT_SHARE:.0%} or more)"
        )
    return None


def _launch(kind: str, k: Kernel) -> str | None:
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
    return None


def why_not(kind: str, k: Kernel) -> str:
    """What the kernel's metrics show against ``kind``, in words."""
    return _regime(kind, k) or _cause(kind, k) or _launch(kind, k) or "the conductor does not find it in this report"
