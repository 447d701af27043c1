"""Time the verdict on ONE CUDA candidate after the session's first build, as %%optimize meets it (issue #13's
"verifying one CUDA candidate <= 10 s after the session's first build"; run on the GPU machine).

    python benchmarks/judge_one.py CELL [CELL ...] [--pause S]

For each cell, in one fresh build root: the judge is started ahead as %%optimize starts it while it profiles the
original (the reference's process, a candidate's process, torch's precompiled header), the reference's inputs and
results are made (the session's first build: the cell's torch half and kernels), then candidates are judged one
at a time, each alone in its round, ``--pause`` seconds apart (default 0: the next candidate's process was started
during the previous verdict, no longer): the versions Kernel Lab's CUDA transformations make that leave the torch
half alone (padded shared tiles, ``__launch_bounds__``), then, for a cell whose launch reads a ``THREADS`` define,
versions with other block sizes (a new torch half: its build is the ~9 s of host compilation).
Prints each verdict's wall time and where it went, as benchmarks/judge_round.py does.
Run it from a folder outside the repository with PYTHONPATH naming the checkout to measure.
"""

from __future__ import annotations

import argparse
import os
import re
import tempfile
import time
from pathlib import Path

from fastbuild_reuse import versions
from judge_round import SPENT, instrument, print_spent

from kernel_lab.verify import Judge, Options

THREADS = re.compile(r"#define THREADS (\d+)")


def candidates(source: str) -> list[tuple[str, str]]:
    """(what it changes, the cell) for each version to judge."""
    made = versions(source)[1:]
    if match := THREADS.search(source):
        made += [
            (f"THREADS {t} (a new torch half)", THREADS.sub(f"#define THREADS {t}", source, count=1))
            for t in (64, 128, 256, 512)
            if str(t) != match.group(1)
        ]
    return made


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("cells", nargs="+")
    parser.add_argument("--pause", type=float, default=0.0)
    args = parser.parse_args()
    os.environ["TORCH_EXTENSIONS_DIR"] = tempfile.mkdtemp(prefix="kl_judge_one_")
    instrument()
    for cell in map(Path, args.cells):
        source = cell.read_text()
        start = time.perf_counter()
        with Judge(source, Options(timeout=600)) as judge:
            judge.start(prepare=True)
            judge.wait_prepared()
            if judge._header is not None:
                judge._header.wait()
            print(f"{cell.name}: first build and the reference's results {time.perf_counter() - start:.1f} s", flush=True)
            for what, text in candidates(source):
                time.sleep(args.pause)
                SPENT.clear()
                t = time.perf_counter()
                verdict = judge.check(text)
                speedup = f"{verdict.timing.speedup:.2f}x" if verdict.timing else "-"
                print(f"  {time.perf_counter() - t:5.1f} s  {what}: {verdict.correct} {verdict.reason[:80]} {speedup}")
                print_spent("      ")


if __name__ == "__main__":
    main()
