"""Wall time of the judge, a checkout before a change and this tree after it, side by side in one run.

    git worktree add /tmp/judge_before 6094ce2      # e.g. the judge before #10: one shared worker process
    python benchmarks/judge_cost.py --before /tmp/judge_before [--device cpu|cuda] [--repeats 3]
        [--reference CELL --candidate CELL]

For each repeat, alternating before/after, each in a fresh process: (a) one ``verify(reference,
candidate)``; (b) four candidates of one reference, as an ``%%optimize`` round judges them (with one
``Judge`` whose reference process serves all four; a checkout without ``Judge``, from before #10, makes
four ``verify`` calls). Prints medians.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WHERE = "import json, kernel_lab\nprint(json.dumps(kernel_lab.__file__))\n"  # first line out: the package measured
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
from kernel_lab import verify as V
from kernel_lab.settings import Settings
ref, cand = (Path(p).read_text() for p in sys.argv[1:3])
t = time.perf_counter()
options = V.Options(timeout=600) if hasattr(V, "Options") else Settings(verify_timeout=600)  # this tree, or one before
with V.Judge(ref, options, sys.argv[3]) as judge:
    for _ in range(4):
        assert judge.check(cand).correct
print((time.perf_counter() - t) / 4)
"""
PHASES = """
import time, sys
from pathlib import Path
from kernel_lab import verify as V
from kernel_lab.settings import Settings
ref, cand = (Path(p).read_text() for p in sys.argv[1:3])
options = V.Options(timeout=600) if hasattr(V, "Options") else Settings(verify_timeout=600)  # this tree, or one before
with V.Judge(ref, options, sys.argv[3]) as judge:
    took = []
    for _ in range(4):
        t = time.perf_counter()
        assert judge.check(cand).correct
        took.append(time.perf_counter() - t)
print(took[0], sum(took[1:]) / 3)
"""


def measure(code: str, package: Path, reference: Path, candidate: Path, device: str) -> list[float]:
    """Run ``code`` with ``package``'s kernel_lab: from a neutral folder, since ``python -c`` puts the current
    folder first on the path (from the repository's root, both sides would import this tree's kernel_lab)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(package.resolve()), os.environ.get("PYTHONPATH")) if p)}
    args = [sys.executable, "-c", WHERE + code, str(reference.resolve()), str(candidate.resolve()), device]
    done = subprocess.run(args, capture_output=True, text=True, env=env, check=True, cwd=tempfile.gettempdir())
    where = json.loads(done.stdout.strip().splitlines()[0])
    assert Path(where).resolve().is_relative_to(package.resolve()), f"measured {where}, not {package}"
    return [float(x) for x in done.stdout.strip().splitlines()[-1].split()]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--before", type=Path, required=True, help="a checkout of the judge before #10")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--reference", type=Path, default=CELLS / "add_ref.py")
    parser.add_argument("--candidate", type=Path, default=CELLS / "add_fast.py")
    parser.add_argument(
        "--phases",
        action="store_true",
        help="with a Judge on both sides: the reference's preparation with the first candidate, and each later candidate",
    )
    args = parser.parse_args()
    if args.phases:
        phases(args)
        return
    rows: dict[tuple[str, str], list[float]] = {
        ("single verify", "before"): [],
        ("single verify", "after"): [],
        ("per candidate, 4 in a session", "before"): [],
        ("per candidate, 4 in a session", "after"): [],
    }
    for _ in range(args.repeats):
        for side, package in (("before", args.before), ("after", ROOT)):
            rows[("single verify", side)] += measure(SINGLE, package, args.reference, args.candidate, args.device)
            print(f"single verify, {side}: {rows[('single verify', side)][-1]:.2f} s", flush=True)
        judge = args.before / "kernel_lab/verify/judge.py"
        old = ROUND_AFTER if judge.exists() and "class Judge" in judge.read_text() else ROUND_BEFORE
        for side, package, code in (("before", args.before, old), ("after", ROOT, ROUND_AFTER)):
            rows[("per candidate, 4 in a session", side)] += measure(code, package, args.reference, args.candidate, args.device)
            print(f"per candidate of 4, {side}: {rows[('per candidate, 4 in a session', side)][-1]:.2f} s", flush=True)
    print(f"judge wall time, {args.device}, {args.reference.name} vs {args.candidate.name}, median of {args.repeats}")
    for what in ("single verify", "per candidate, 4 in a session"):
        before, after = (statistics.median(rows[(what, side)]) for side in ("before", "after"))
        print(f"  {what:32s} before {before:6.2f} s   after {after:6.2f} s   after/before {after / before:.2f}")


def phases(args: argparse.Namespace) -> None:
    """Both sides with a Judge: (reference + first candidate, each later candidate), alternating sides."""
    rows: dict[str, list[list[float]]] = {"before": [], "after": []}
    for _ in range(args.repeats):
        for side, package in (("before", args.before), ("after", ROOT)):
            rows[side].append(measure(PHASES, package, args.reference, args.candidate, args.device))
    print(f"judge wall time, {args.device}, {args.reference.name} vs {args.candidate.name}, median of {args.repeats}")
    for k, what in enumerate(("reference + first candidate", "each later candidate")):
        before, after = (statistics.median(r[k] for r in rows[side]) for side in ("before", "after"))
        print(f"  {what:32s} before {before:6.2f} s   after {after:6.2f} s   after/before {after / before:.2f}")


if __name__ == "__main__":
    main()
