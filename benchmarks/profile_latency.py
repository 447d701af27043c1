"""Time to hints: ``%%profile``'s path vs a naive ``ncu --set full python cell.py``, side by side.

    python benchmarks/profile_latency.py [CELL.py] [--repeats 3]

Run on a GPU machine with ncu. For each repeat (alternating, so drift hits both equally):
* kernel_lab: ``kernel_lab.profile(cell)`` (fresh process under ncu: warm-up outside the NVTX
  range, targeted sections, only the cell's kernels), then the diagnosis rendered as HTML — what
  ``%%profile`` does before hints are on screen;
* naive: ``ncu --clock-control none --set full -f -o out python naive.py``, where naive.py is the
  cell plus one ``run(*make_inputs())`` call (every kernel profiled, full set).
Prints the medians, their ratio, and the replay passes each needed.
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import kernel_lab
from kernel_lab import samples
from kernel_lab.profiling import ncu


def kernel_lab_once(cell: Path) -> tuple[float, list[int]]:
    passes: list[int] = []
    start = time.perf_counter()
    result = kernel_lab.profile(cell, on_progress=lambda e: e.passes and passes.append(e.passes))
    result._repr_html_()
    return time.perf_counter() - start, passes


def naive_once(cell: Path, workdir: Path) -> tuple[float, list[int]]:
    script = workdir / "naive.py"
    script.write_text(
        cell.read_text()
        + "\n\nif __name__ == '__main__':\n    import torch\n    run(*make_inputs())\n    torch.cuda.synchronize()\n"
    )
    cmd = [
        ncu.find_ncu(),
        "--clock-control",
        "none",
        "--set",
        "full",
        "-f",
        "-o",
        str(workdir / "naive"),
        sys.executable,
        str(script),
    ]
    start = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    return time.perf_counter() - start, [int(p) for p in re.findall(r"- (\d+) passes", out)]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("cell", nargs="?", type=Path, default=samples.cell("memory_bound"))
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    ours, naive = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.repeats):
            t, p_ours = kernel_lab_once(args.cell)
            ours.append(t)
            t, p_naive = naive_once(args.cell, Path(tmp))
            naive.append(t)
            print(
                f"repeat {i}: kernel_lab {ours[-1]:.2f} s ({len(p_ours)} launch(es), passes {p_ours}); "
                f"naive {naive[-1]:.2f} s ({len(p_naive)} launch(es), passes {p_naive})",
                flush=True,
            )
    m_ours, m_naive = statistics.median(ours), statistics.median(naive)
    print(f"\ncell: {args.cell.name}")
    print(f"kernel_lab (profile + diagnosis + HTML): median {m_ours:.2f} s  [{min(ours):.2f}-{max(ours):.2f}]")
    print(f"naive ncu --set full:                    median {m_naive:.2f} s  [{min(naive):.2f}-{max(naive):.2f}]")
    print(f"ratio kernel_lab / naive: {m_ours / m_naive:.2f}")


if __name__ == "__main__":
    main()
