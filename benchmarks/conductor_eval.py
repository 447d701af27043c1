"""How often the conductor names the right bottleneck, on kernels recorded for the purpose, against
Nsight Compute's own ranking; and whether its estimated gains come true.

    python benchmarks/conductor_eval.py [--split tuning|held_out|held_out_2|...|held_out_10|all] [--json OUT] [--markdown] [--provisional]

The suite (tests/data/suite, its README and manifest.toml) holds 66 planted-bottleneck kernels recorded on
an H100, each labelled from its metrics. Families of kernels (code shapes) were set aside as held out before
anything was recorded, and accuracy is reported for each split (since #14 the rules are tuned on all 66; the
held_out row keeps the old split for comparison). A second held-out set (``held_out_families_2``: code families new
to the suite, written after the rules were tuned) is its own split, ``held_out_2``. Cells marked
``provisional = true`` in the manifest are not recorded or labelled yet: they are left out unless ``--provisional``
is given.

* **top-1 / top-3**: the label is the conductor's first kind (first three). A kernel labelled ``near_roof`` is
  right when the conductor says it is near its roof and ranks no specific cause first (a regime first, or
  nothing): it must not invent a problem.
* **Nsight Compute's ranking**: the kind of its rule result with the largest estimated speedup (mapped through
  the rules' ``NCU_RULES``/``NCU_TITLES``); when no result estimates 10% or more, it says "nothing big",
  which counts as right for ``near_roof``.
* **Estimates**: for every naive/fixed pair, the conductor's score of the fixed kind on the naive kernel
  (the share of time a fix would save) against the measured share, 1 - t_fixed / t_naive (durations
  under ncu from the two reports); "factor" is the larger of predicted/measured and measured/predicted.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import dataclass, field
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parent.parent
SUITE = ROOT / "tests" / "data" / "suite"
sys.path.insert(0, str(SUITE))

from summarize import report_path  # noqa: E402 - the suite's own loader (decompresses and checks the reports)

from kernel_lab.analysis import conductor  # noqa: E402
from kernel_lab.analysis import rules as registry  # noqa: E402
from kernel_lab.models import Diagnosis  # noqa: E402
from kernel_lab.profiling import report  # noqa: E402

NCU_SOMETHING = 10.0  # % estimated speedup under which Nsight Compute says nothing big
SPLITS = ("tuning", "held_out", *(f"held_out_{n}" for n in range(2, 15)))  # held_out_N: held_out_families_N


@dataclass
class Row:
    name: str
    family: str
    split: str
    label: str
    conductor: list[str]
    near_roof: bool
    ncu: str
    top1: bool = False
    top3: bool = False
    ncu_top1: bool = False
    unsure: bool = False  # the conductor said its first two readings are about even (Diagnosis.uncertain)
    duration_ns: float = 0.0
    scores: dict[str, float] = field(default_factory=dict)


def manifest() -> dict:
    return tomllib.loads((SUITE / "manifest.toml").read_text())


def diagnosis(entry: dict) -> Diagnosis:
    """The conductor on the cell's kernel (the longest launch of the report when the cell names none)."""
    kernels = report.load(report_path(entry["name"])).kernels
    named = [k for k in kernels if entry["kernel"] == "*" or k.name in entry["kernel"].split("|")]
    kernel = max(named or kernels, key=lambda k: k.get("gpu__time_duration.sum") or 0)
    return conductor.diagnose_kernel(kernel)


def ncu_top(d: Diagnosis) -> str:
    """Nsight Compute's own first choice: the kind of its result with the largest estimated speedup."""
    by_rule, by_title = registry.ncu_kinds()
    best, kind = NCU_SOMETHING, "near_roof"
    for r in d.kernel.rules:
        mapped = by_title.get(r.title) or by_rule.get(r.rule)
        if mapped and r.speedup_pct is not None and r.speedup_pct >= best and r.severity in ("OPT", "WRN"):
            best, kind = r.speedup_pct, mapped
    return kind


def score(entry: dict, d: Diagnosis, split: str) -> Row:
    kinds = [b.kind for b in d.bottlenecks]
    near = d.near_roof is not None
    row = Row(
        entry["name"],
        entry["family"],
        split,
        entry["primary"],
        kinds,
        near,
        ncu_top(d),
        unsure=d.uncertain is not None,
        duration_ns=d.kernel.get("gpu__time_duration.sum") or 0.0,
        scores={b.kind: b.score for b in d.bottlenecks},
    )
    if entry["primary"] == "near_roof":
        regimes = registry.regimes()
        row.top1 = near and (not kinds or kinds[0] in regimes)
        row.top3 = near
    else:
        row.top1 = bool(kinds) and kinds[0] == entry["primary"]
        row.top3 = entry["primary"] in kinds[:3]
    row.ncu_top1 = row.ncu == entry["primary"]
    return row


def estimates(rows: dict[str, Row], entries: list[dict]) -> list[dict]:
    """Predicted against measured share of time saved, for every naive/fixed pair."""
    out = []
    for e in entries:
        naive = e.get("fix_of")
        if not naive or naive not in rows:
            continue
        before, after = rows[naive], rows[e["name"]]
        predicted = before.scores.get(e["fixes_kind"], 0.0)
        measured = 1 - after.duration_ns / before.duration_ns if before.duration_ns else 0.0
        ratio = predicted / measured if predicted > 0 and measured > 0 else math.inf
        out.append(
            {
                "naive": naive,
                "fixed": e["name"],
                "kind": e["fixes_kind"],
                "predicted_saved": round(predicted, 3),
                "measured_saved": round(measured, 3),
                "speedup_predicted": round(1 / (1 - predicted), 2) if predicted < 1 else None,
                "speedup_measured": round(before.duration_ns / after.duration_ns, 2) if after.duration_ns else None,
                "factor": round(max(ratio, 1 / ratio), 2) if math.isfinite(ratio) else None,
            }
        )
    return out


def evaluate(split: str = "all", provisional: bool = False) -> dict:
    """Accuracy and estimates on the suite; cells marked ``provisional`` in the manifest (a held-out set still being
    written, kept for a final evaluation) are left out unless asked for."""
    m = manifest()

    def split_of(e: dict) -> str:
        for split in SPLITS[2:]:  # held_out_N: the families of held_out_families_N
            if e["family"] in m.get(split.replace("held_out", "held_out_families"), ()):
                return split
        return "held_out" if e["family"] in m["held_out_families"] else "tuning"

    entries = [e for e in m["kernel"] if (provisional or not e.get("provisional")) and split in ("all", split_of(e))]
    rows = {e["name"]: score(e, diagnosis(e), split_of(e)) for e in entries}

    def accuracy(selected: list[Row]) -> dict:
        n = len(selected)
        return {
            "kernels": n,
            "top1": sum(r.top1 for r in selected) / n if n else None,
            "top3": sum(r.top3 for r in selected) / n if n else None,
            "ncu_top1": sum(r.ncu_top1 for r in selected) / n if n else None,
            "misses": sum(not r.top1 for r in selected),
            "misses_unsure": sum(r.unsure and not r.top1 for r in selected),
            "hits_unsure": sum(r.unsure and r.top1 for r in selected),
        }

    groups = {g: [r for r in rows.values() if r.split == g] for g in SPLITS}
    groups["all"] = list(rows.values())
    return {
        "split": split,
        "accuracy": {k: accuracy(v) for k, v in groups.items() if v},
        "kernels": [vars(r) for r in rows.values()],
        "estimates": estimates(rows, entries),
    }


def markdown(result: dict) -> str:
    lines = [
        "| split | kernels | conductor top-1 | conductor top-3 | Nsight Compute top-1 | misses said unsure | hits said unsure |",
        "|---|---|---|---|---|---|---|",
    ]
    for split, a in result["accuracy"].items():
        lines.append(
            f"| {split} | {a['kernels']} | {a['top1']:.0%} | {a['top3']:.0%} | {a['ncu_top1']:.0%} "
            f"| {a['misses_unsure']} of {a['misses']} | {a['hits_unsure']} of {a['kernels'] - a['misses']} |"
        )
    lines += ["", "| kernel | family | label | conductor (first 3) | near roof | Nsight Compute |", "|---|---|---|---|---|---|"]
    for r in result["kernels"]:
        mark = ("✓" if r["top1"] else "✗") + (" (unsure)" if r["unsure"] else "")
        held = {"held_out": " (held out)"}.get(r["split"], f" (held out, set {r['split'].removeprefix('held_out_')})")
        held = "" if r["split"] == "tuning" else held
        lines.append(
            f"| {r['name']} | {r['family']}{held} | {r['label']} | {mark} {', '.join(r['conductor'][:3]) or '–'} "
            f"| {'yes' if r['near_roof'] else ''} | {'✓' if r['ncu_top1'] else '✗'} {r['ncu']} |"
        )
    lines += [
        "",
        "| naive → fixed | kind fixed | predicted saved | measured saved | predicted / measured speedup | factor |",
        "|---|---|---|---|---|---|",
    ]
    for e in result["estimates"]:
        lines.append(
            f"| {e['naive']} → {e['fixed']} | {e['kind']} | {e['predicted_saved']:.0%} | {e['measured_saved']:.0%} "
            f"| {e['speedup_predicted']} / {e['speedup_measured']} | ×{e['factor']} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--split", choices=(*SPLITS, "all"), default="tuning")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--provisional", action="store_true", help="include the cells marked provisional in the manifest")
    args = parser.parse_args()
    result = evaluate(args.split, args.provisional)
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))
    if args.markdown:
        print(markdown(result))
    else:
        for split, a in result["accuracy"].items():
            print(
                f"{split:9s} {a['kernels']:3d} kernels  conductor top-1 {a['top1']:.0%}  top-3 {a['top3']:.0%}  "
                f"Nsight Compute top-1 {a['ncu_top1']:.0%}"
            )
        for r in result["kernels"]:
            if not r["top1"]:
                print(f"  miss {r['name']:34s} label {r['label']:22s} conductor {r['conductor'][:3]} near={r['near_roof']}")
        factors = [e["factor"] for e in result["estimates"] if e["factor"]]
        if factors:
            within = sum(f <= 1.5 for f in factors) / len(factors)
            print(
                f"estimates: {len(factors)} pairs, {within:.0%} within a factor 1.5 of the measured share of time saved, "
                f"median factor {sorted(factors)[len(factors) // 2]:.2f}"
            )


if __name__ == "__main__":
    main()
