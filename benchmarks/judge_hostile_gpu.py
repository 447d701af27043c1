"""The judge's hostile, sloppy and honest cases (``tests/test_verify.py``'s ``GROUPS``) judged on one device, a line
per case as each reference's group is done, and set against another device's run (issue #40).

    python benchmarks/judge_hostile_gpu.py --device cpu --json cpu.jsonl
    python benchmarks/judge_hostile_gpu.py --device cuda --json gpu.jsonl --against cpu.jsonl

Each case reads ``pass`` (correct and held back by nothing), ``flag`` (correct, held back by a warning) or ``wrong``,
with its reason or first warning; ``DIFFERS`` marks a case whose outcome is not the one ``--against`` recorded.
``--resume``: the cases the ``--json`` file holds already are not judged again (a device call's time ran out).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from test_verify import GROUPS, judge_group

from kernel_lab.verify import Verdict


def outcome(v: Verdict) -> str:
    return "wrong" if not v.correct else "flag" if v.flagged else "pass"


def why(v: Verdict) -> str:
    return v.warnings[0].text if v.correct and v.flagged else v.reason


def outcomes(path: Path) -> dict[str, str]:
    """Each case's outcome in a --json file."""
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return {row["case"]: row["outcome"] for row in rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--json", type=Path, help="append one JSON line per case")
    parser.add_argument("--against", type=Path, help="another device's --json, to set each outcome against")
    parser.add_argument("--resume", action="store_true", help="leave out the cases --json holds already")
    args = parser.parse_args()
    done = outcomes(args.json) if args.resume and args.json and args.json.exists() else {}
    todo = {key: {c: s for c, s in cases.items() if c not in done} for key, cases in GROUPS.items()}
    other = outcomes(args.against) if args.against else {}
    start, differ = time.perf_counter(), []
    with ThreadPoolExecutor(max_workers=3) as pool:
        groups = [pool.submit(judge_group, key, cases, device=args.device) for key, cases in todo.items() if cases]
        for group in as_completed(groups):
            for case, v in group.result().items():
                said = outcome(v)
                mark = "DIFFERS" if other.get(case, said) != said else ""
                differ += [case] * bool(mark)
                print(f"{time.perf_counter() - start:4.0f} s {case:28} {said:5} {mark:7} {why(v)[:48]}", flush=True)
                if args.json:
                    row = {"case": case, "outcome": said, "why": why(v), "warnings": [w.kind for w in v.warnings]}
                    row["speedup"] = v.timing.speedup if v.timing else None
                    with args.json.open("a") as out:
                        out.write(json.dumps(row) + "\n")
    print(f"{len(differ)} of the cases differ from {args.against}: {', '.join(differ) or 'none'}" if args.against else "")


if __name__ == "__main__":
    main()
