"""The judge on honest candidates: a cell judged against copies of itself, so any speedup or warning is noise.

    python benchmarks/judge_noise.py [CELL] [--rounds 3] [--candidates 4] [--device cuda]

Each round judges ``--candidates`` copies of the cell's own code (one judge, as ``%%optimize`` judges a round) and
prints, per candidate and declared shape, the speedup the judge read, whether it called it significant, the
medians and interquartile ranges, and the warnings (an honest candidate must have none: a warning blocks it).
The raw samples of each shape (the reference's series and each candidate's) are printed too.
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path
from typing import Any

from kernel_lab.verify import Options
from kernel_lab.verify import judge as judge_module
from kernel_lab.verify import verdict as verdict_module

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("cell", nargs="?", default=str(ROOT / "tests" / "cells" / "sized_add_ref.py"))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--candidates", type=int, default=4)
    parser.add_argument("--device", default=None)
    args = parser.parse_args()
    source = Path(args.cell).read_text()
    raw: list[tuple[Any, list[float], list[float]]] = []
    from_samples = verdict_module.Timing.from_samples.__func__  # type: ignore[attr-defined]

    def logged(cls: Any, reference: list[float], candidate: list[float], shape: tuple = ()) -> Any:
        raw.append((shape, list(reference), list(candidate)))
        return from_samples(cls, reference, candidate, shape)

    verdict_module.Timing.from_samples = classmethod(logged)  # type: ignore[method-assign,assignment]
    flagged = 0
    with judge_module.Judge(source, Options(timeout=300.0), args.device) as judge:
        for round_ in range(1, args.rounds + 1):
            raw.clear()
            verdicts = judge.check_many([source] * args.candidates)
            print(f"== round {round_}")
            for i, v in enumerate(verdicts):
                flagged += bool(v.warnings) or not v.correct
                print(f"  candidate {i}: {'correct' if v.correct else 'WRONG: ' + v.reason}; warnings: {list(v.warnings)}")
                for t in v.shapes:
                    print(
                        f"    {t.shape}: {t.speedup:.3f}x{' significant' if t.significant else ''}; reference"
                        f" {t.reference_ms * 1e3:.1f} us (IQR {t.reference_spread * 1e3:.1f}), candidate"
                        f" {t.candidate_ms * 1e3:.1f} us (IQR {t.candidate_spread * 1e3:.1f}), {t.repeats} samples"
                    )
            for shape, reference, candidate in raw:
                print(f"  raw {shape}: reference {_us(reference)}")
                print(f"  raw {shape}: candidate {_us(candidate)}")
    print(f"honest candidates flagged or rejected: {flagged} of {args.rounds * args.candidates}")


def _us(samples: list[float]) -> str:
    q = statistics.quantiles(samples, n=4) if len(samples) > 1 else samples * 3
    head = " ".join(f"{s * 1e3:.1f}" for s in samples[:12])
    return f"n={len(samples)} quartiles {q[0] * 1e3:.1f}/{q[1] * 1e3:.1f}/{q[2] * 1e3:.1f} us; first: {head}"


if __name__ == "__main__":
    main()
