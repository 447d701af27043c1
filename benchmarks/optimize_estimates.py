"""The conductor's estimate against what %%optimize then measured, from the race's logs (issue #14, part 3).

    python benchmarks/optimize_estimates.py benchmarks/race_h100_after_profile benchmarks/race_h100_quick_compare

Each log of ``autotune_race.py`` names round 1's top bottleneck and its score (the share of the original's time its
fix should save) and ends with the original's time and the built-in optimizer's best, whose change answered that
bottleneck (launch parameters of the cell's kernel). Per cell: the median over its runs of the measured share saved,
and the factor between the two shares (the larger over the smaller), as ``conductor_eval.py`` reports it for the
suite's naive/fixed pairs. Runs that kept the original count as nothing saved.
"""

from __future__ import annotations

import argparse
import ast
import re
import statistics
from pathlib import Path

TOP = re.compile(r"round 1: top bottleneck (\w+) \(([\d.]+)\)")


def runs(folders: list[Path]) -> dict[str, list[tuple[str, float, float]]]:
    """cell -> [(kind, predicted share saved, measured share saved)], one per race log."""
    found: dict[str, list[tuple[str, float, float]]] = {}
    for log in sorted(p for folder in folders for p in folder.glob("race_*.log")):
        top = None
        for line in log.read_text().splitlines():
            if (m := TOP.search(line)) and top is None:
                top = (m.group(1), float(m.group(2)))
            elif line.startswith("{'cell'") and top is not None:
                row = ast.literal_eval(line)
                found.setdefault(row["cell"], []).append((top[0], top[1], 1 - row["ours"] / row["original"]))
                top = None
    return found


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("folders", nargs="+", type=Path)
    args = parser.parse_args()
    print("| cell | runs | top bottleneck (round 1) | predicted saved | measured saved (median) | factor |")
    print("|---|---|---|---|---|---|")
    factors = []
    for cell, rows in sorted(runs(args.folders).items()):
        kinds = sorted({kind for kind, _, _ in rows})
        predicted = statistics.median(p for _, p, _ in rows)
        measured = statistics.median(m for _, _, m in rows)
        factor = max(predicted, measured) / min(predicted, measured) if min(predicted, measured) > 0 else float("inf")
        factors.append(factor)
        print(f"| {cell} | {len(rows)} | {', '.join(kinds)} | {predicted:.0%} | {measured:.1%} | ×{factor:.2f} |")
    within = sum(f <= 1.5 for f in factors)
    print(f"\n{within} of {len(factors)} cells within a factor 1.5 of the measured share of time saved")


if __name__ == "__main__":
    main()
