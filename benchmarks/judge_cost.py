"""Wall time of the judge, before and after the trust boundary (#10), side by side in one run.

    git worktree add /tmp/judge_before 6094ce2      # the judge before: one shared worker process
    python benchmarks/judge_cost.py --before /tmp/judge_before [--device cpu|cuda] [--repeats 3]

For each repeat, alternating before/after, each in a fresh process: (a) one ``verify(reference,
candidate)``; (b) four candidates of one reference, as an ``%%optimize`` round judges them (before: four
``verify`` calls; after: one ``Judge`` whose reference process serves all four). Prints medians.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CELLS = ROOT / "tests" / "cells"

SINGLE = """
import time, sys
from pathlib import Path
from kernel_lab.verify import verify
ref, cand = (Path(p).read_text() for p in sys.argv[1:3])
t = time.perf_counter()
v = verify(ref, cand, device=sys.argv[3], timeout=600)
assert v.correct, v.reason
print(time.perf_counter() - t)
"""
ROUND_BEFORE = """
import time, sys
from pathlib import Path
from kernel_lab.verify import verify
ref, cand = (Path(p).read_text() for p in sys.argv[1:3])
t = time.perf_counter()
for _ in range(4):
    assert verify(ref, cand, device=sys.argv[3], timeout=600).correct
print((time.perf_counter() - t) / 4)
"""
ROUND_AFTER = """
import time, sys
from pathlib import Path
from kernel_lab.settings import Settings
from kernel_lab.verify import Judge
ref, cand = (Path(p).read_text() for p in sys.argv[1:3])
t = time.perf_counter()
with Judge(ref, Settings(verify_timeout=600), sys.argv[3]) as judge:
    for _ in range(4):
        assert judge.check(cand).correct
print((time.perf_counter() - t) / 4)
"""


def measure(code: str, package: Path, reference: Path, candidate: Path, device: str) -> float:
    env = {**os.environ, "PYTHONPATH": str(package)}
    done = subprocess.run(
        [sys.executable, "-c", code, str(reference), str(candidate), device], capture_output=True, text=True, env=env, check=True
    )
    return float(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--before", type=Path, required=True, help="a checkout of the judge before #10")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--reference", type=Path, default=CELLS / "add_ref.py")
    parser.add_argument("--candidate", type=Path, default=CELLS / "add_fast.py")
    args = parser.parse_args()
    rows = {
        ("single verify", "before"): [],
        ("single verify", "after"): [],
        ("per candidate, 4 in a session", "before"): [],
        ("per candidate, 4 in a session", "after"): [],
    }
    for _ in range(args.repeats):
        for side, package in (("before", args.before), ("after", ROOT)):
            rows[("single verify", side)].append(measure(SINGLE, package, args.reference, args.candidate, args.device))
        for side, package, code in (("before", args.before, ROUND_BEFORE), ("after", ROOT, ROUND_AFTER)):
            rows[("per candidate, 4 in a session", side)].append(
                measure(code, package, args.reference, args.candidate, args.device)
            )
    print(f"judge wall time, {args.device}, {args.reference.name} vs {args.candidate.name}, median of {args.repeats}")
    for what in ("single verify", "per candidate, 4 in a session"):
        before, after = (statistics.median(rows[(what, side)]) for side in ("before", "after"))
        print(f"  {what:32s} before {before:6.2f} s   after {after:6.2f} s   after/before {after / before:.2f}")


if __name__ == "__main__":
    main()
