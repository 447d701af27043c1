"""The conductor: runs every rule on a kernel, combines their estimates and ranks them.

Ranking model (documented for the JSON's ``score``): each score is the estimated share of the
launch's time that the bottleneck accounts for, 0..1.

* Specific causes (uncoalesced access, bank conflicts, occupancy, ...) score what fixing them
  would save, from their own metrics.
* Regimes (memory-, compute-, latency-bound) keep only what the causes leave unexplained:
  their score is multiplied by the product of (1 - cause score). So a strided copy is reported
  as uncoalesced first, and memory-bound only when no cause explains the traffic.
* A kernel shorter than its launch (launch_overhead): every in-kernel score is scaled by the
  kernel's share of the launch-bound time, and the launch overhead counts as a cause that
  explains part of the regime (a tiny launch cannot fill the GPU).

Nsight Compute's own rule results are attached to the bottleneck they speak about.
"""
from __future__ import annotations

import math
from dataclasses import replace

from kernel_lab.analysis.rules import REGIMES, RULES
from kernel_lab.models import Bottleneck, Diagnosis, Kernel, Profile, RuleResult

MIN_SCORE = 0.02
_RULE_KIND = {
    "UncoalescedGlobalAccess": "uncoalesced_global",
    "SharedMemoryConflicts": "shared_bank_conflicts",
    "UncoalescedSharedAccess": "shared_bank_conflicts",
    "TheoreticalOccupancy": "low_occupancy",
    "AchievedOccupancy": "low_occupancy",
    "ThreadDivergence": "warp_divergence",
    "CPIStall": "latency_bound",
    "IssueSlotUtilization": "latency_bound",
}
_TITLE_KIND = {
    "Small Grid": "small_grid",
    "Tail Effect": "tail_effect",
    "Block Size": "low_occupancy",
    "Latency Issue": "latency_bound",
    "High Memory Throughput": "memory_bound",
    "High Compute Throughput": "compute_bound",
    "High Utilization": "compute_bound",
    "Very High Utilization": "compute_bound",
    "L1TEX Global Load Access Pattern": "uncoalesced_global",
    "L2 Global Load Access Pattern": "uncoalesced_global",
    "DRAM Global Load Access Pattern": "uncoalesced_global",
    "L1TEX Global Store Access Pattern": "uncoalesced_global",
    "L2 Global Store Access Pattern": "uncoalesced_global",
    "L1TEX Local Load Access Pattern": "register_spills",
    "L1TEX Local Store Access Pattern": "register_spills",
}


def rule_kind(rule: RuleResult) -> str | None:
    """The bottleneck kind an Nsight Compute rule message speaks about, if any."""
    if rule.severity not in ("OPT", "WRN"):
        return None
    return _TITLE_KIND.get(rule.title) or _RULE_KIND.get(rule.rule)


def _missing(kernel: Kernel, needs: tuple[tuple[str, ...], ...]) -> list[str]:
    """Metrics missing from the closest alternative, or [] when one alternative is complete."""
    gaps = [[m for m in alt if not kernel.has(m)] for alt in needs]
    return min(gaps, key=len)


def diagnose_kernel(kernel: Kernel) -> Diagnosis:
    """Rank the bottlenecks of one kernel, best-first."""
    found: list[Bottleneck] = []
    not_evaluated: dict[str, str] = {}
    for rule in RULES:
        missing = _missing(kernel, rule.NEEDS)
        if missing:
            not_evaluated[rule.KIND] = "not collected: " + ", ".join(missing)
            continue
        result = rule.evaluate(kernel)
        if result is not None:
            found.append(result)

    causes = [b for b in found if b.kind not in REGIMES]
    unexplained = math.prod(1 - min(c.score, 1.0) for c in causes)
    launch = next((b for b in found if b.kind == "launch_overhead"), None)
    in_kernel = 1 - launch.score if launch else 1.0

    ranked = []
    for b in found:
        score = b.score
        if b.kind in REGIMES:
            score *= unexplained
        if b is not launch:
            score *= in_kernel
        rules = tuple(r for r in kernel.rules if rule_kind(r) == b.kind)
        ranked.append(replace(b, score=min(max(score, 0.0), 1.0), ncu_rules=rules))
    ranked.sort(key=lambda b: -b.score)
    return Diagnosis(kernel, tuple(b for b in ranked if b.score >= MIN_SCORE), not_evaluated)


def diagnose(profile: Profile) -> list[Diagnosis]:
    """Diagnose every kernel of a profile."""
    return [diagnose_kernel(k) for k in profile.kernels]
