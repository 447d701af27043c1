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

With a launch record (what the cell's ``run`` launched), the source patterns of each kernel that its metrics
confirm (analysis/patterns.py) join the rules' findings, and :func:`diagnose_cell` reads the whole cell
(analysis/cell.py).
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

from kernel_lab import metrics as M
from kernel_lab.analysis import cell, flow, patterns, roofline
from kernel_lab.analysis import rules as registry
from kernel_lab.models import Bottleneck, CellReading, Diagnosis, Kernel, Profile, RuleResult

MIN_SCORE = 0.02
NEAR_DRAM_PCT = 75.0  # DRAM throughput at which a memory-bound kernel is near its roof
#: causes whose fix cuts the work or the bytes themselves: they can win more than the roof leaves
CUTS_WORK = frozenset(
    {"uncoalesced_global", "register_spills", "tensor_cores_unused", "warp_divergence", "atomic_contention", "launch_overhead"}
)
CLOSE, MIN_CLOSE = 0.8, 0.15  # a second reading within 80% of the first (and at least 15%) makes the ranking uncertain


def rule_kind(rule: RuleResult) -> str | None:
    """The bottleneck kind an Nsight Compute rule message speaks about, if any (the rules declare which)."""
    if rule.severity not in ("OPT", "WRN"):
        return None
    by_rule, by_title = registry.ncu_kinds()
    return by_title.get(rule.title) or by_rule.get(rule.rule)


def joined(found: list[Bottleneck], extra: tuple[Bottleneck, ...]) -> list[Bottleneck]:
    """The rules' findings with ``extra`` ones (source patterns): one of a kind a rule found takes its place, naming
    its line and change, then what the rule measured (its summary), with the larger of the two estimates."""
    out = list(found)
    for e in extra:
        i = next((j for j, b in enumerate(out) if b.kind == e.kind), None)
        if i is None:
            out.append(e)
            continue
        b = out[i]
        lines = e.source_lines + tuple(
            s for s in b.source_lines if (s.file, s.line) not in {(x.file, x.line) for x in e.source_lines}
        )
        out[i] = replace(
            e,
            score=max(b.score, e.score),
            hint=f"{e.hint} Measured: {b.summary}.",
            evidence={**b.evidence, **e.evidence},
            source_lines=lines,
            limiter=b.limiter,
        )
    return out


def diagnose_kernel(kernel: Kernel, extra: tuple[Bottleneck, ...] = ()) -> Diagnosis:
    """Rank the bottlenecks of one kernel, best-first; ``extra``: findings made outside the rules (see :func:`joined`)."""
    found: list[Bottleneck] = []
    not_evaluated: dict[str, str] = {}
    for rule in registry.rules():
        missing = rule.missing(kernel)
        if missing:
            not_evaluated[rule.kind] = "not collected: " + ", ".join(missing)
            continue
        try:
            result = rule.evaluate(kernel)
        except Exception as exc:  # noqa: BLE001 - one rule's bug must not cost the whole diagnosis
            not_evaluated[rule.kind] = f"the rule failed ({rule.origin}): {exc}"
            continue
        if result is not None:
            found.append(result)
    found = joined(found, extra)

    regimes = registry.regimes()
    roof = near_roof(kernel)
    if roof is not None:  # near a roof, a cause that does not cut the work can win at most what is left to it
        found = [b if b.kind in regimes or b.kind in CUTS_WORK else capped(b, roof) for b in found]
    causes = [b for b in found if b.kind not in regimes]
    unexplained = math.prod(1 - min(c.score, 1.0) for c in causes)
    launch = next((b for b in found if b.kind == "launch_overhead"), None)
    in_kernel = 1 - launch.score if launch else 1.0

    ranked = []
    for b in found:
        score = b.score
        if b.kind in regimes:
            score *= unexplained
        if b is not launch:
            score *= in_kernel
        rules = tuple(r for r in kernel.rules if rule_kind(r) == b.kind)
        ranked.append(replace(b, score=min(max(score, 0.0), 1.0), ncu_rules=rules))
    ranked.sort(key=lambda b: -b.score)
    kept = tuple(b for b in ranked if b.score >= MIN_SCORE)
    # near its roof, what is left is small whichever reading comes first: no call to measure more
    return Diagnosis(kernel, kept, not_evaluated, roof, uncertainty(kept) if roof is None else None)


def near_roof(kernel: Kernel) -> dict[str, Any] | None:
    """{"roof", "fraction"} when the kernel is near the roof that binds it (a compute roof, or DRAM bandwidth)."""
    at = roofline.compute_roof(kernel)
    if at is not None and at[0] >= roofline.NEAR:
        return {"roof": at[1], "fraction": round(at[0], 3)}
    dram = kernel.get(M.DRAM_PCT)
    if dram is not None and dram >= NEAR_DRAM_PCT:
        return {"roof": "DRAM", "fraction": round(dram / 100, 3)}
    return None


def left(roof: dict[str, Any]) -> float:
    """The share of the time a kernel near ``roof`` could still save without cutting its work or its bytes: up to
    the DRAM rate kernels reach (:data:`~kernel_lab.analysis.roofline.DRAM_REACHED`, not ncu's peak), or a
    compute roof itself."""
    reached = roofline.DRAM_REACHED if roof["roof"] == "DRAM" else 1.0
    return max(0.0, 1 - roof["fraction"] / reached)


def capped(b: Bottleneck, roof: dict[str, Any]) -> Bottleneck:
    """``b`` with its score at most what is :func:`left` to ``roof``; its hint says so where that lowers it (the
    hint's own figures, such as a tail's idle SM time, would promise more)."""
    most = left(roof)
    if b.score <= most:
        return b
    said = f" Near the {roof['roof']} roof, though, this can save at most about {most:.0%} of the time."
    return replace(b, score=most, hint=b.hint + said)


def uncertainty(ranked: tuple[Bottleneck, ...]) -> str | None:
    """What to measure next when the first two readings explain about the same time, else None.

    Either may be a regime (memory, compute or latency bound) or a cause: a cause close to a regime may be
    why the kernel is in it, or beside it, and the profile alone cannot tell which of their fixes saves more."""
    if len(ranked) >= 2 and ranked[1].score >= MIN_CLOSE and ranked[1].score >= CLOSE * ranked[0].score:
        first, second = ranked[0], ranked[1]
        return (
            f"Two readings explain about the same time: {first.kind} ({first.score:.0%}) and {second.kind} "
            f"({second.score:.0%}); the profile cannot tell which one matters more. Fix one of them, profile "
            "again and compare the durations: the one whose fix saves more is the limiter."
        )
    return None


def diagnose(profile: Profile) -> list[Diagnosis]:
    """Diagnose every kernel of a profile; with a launch record, each kernel's confirmed source patterns join in."""
    if profile.record is None:
        return [diagnose_kernel(k) for k in profile.kernels]
    launch_of = {k.index: launch for launch, k in flow.pairs(profile.record, profile.kernels) if k is not None}
    return [diagnose_kernel(k, patterns.findings(k, launch_of.get(k.index))) for k in profile.kernels]


def diagnose_cell(profile: Profile) -> CellReading | None:
    """The reading of the whole cell (analysis/cell.py), or None without a launch record."""
    return cell.read(profile)
