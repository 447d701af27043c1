"""Build every CUDA cell we ship the way the judge builds a candidate, run it, and compare with its reference.

    python benchmarks/fastbuild_check.py [--jobs 8] [CELL ...]      # on the GPU machine

Each cell runs in a fresh process with ``kernel_lab.fastbuild`` installed (as in the judge's candidate
processes), from one fresh build root shared by all, so the first build also precompiles the header.
Prints one line per cell: whether it was built split or as written, its build time, and whether
``run(*make_inputs())`` matches the cell's ``reference`` (where it has one); then the totals.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

ONE = """
import json, runpy, sys, time
import torch
from kernel_lab import fastbuild
fastbuild.install()
t = time.perf_counter()
cell = runpy.run_path(sys.argv[1])
built = time.perf_counter() - t
inputs = cell["make_inputs"]()
out = cell["run"](*inputs)
match = None
if "reference" in cell:
    want = cell["reference"](*inputs)
    out, want = (v if isinstance(v, (tuple, list)) else (v,) for v in (out, want))
    # within 2% of the largest value: the cells' own precision (fp16 sums over long rows), not the build's
    match = all(torch.allclose(a.float(), b.float(), rtol=2e-2, atol=2e-2 * float(b.float().abs().max()))
                for a, b in zip(out, want, strict=True))
print(json.dumps({"built_s": built, "match": match}))
"""


def cells(given: list[str]) -> list[Path]:
    if given:
        return [Path(p).resolve() for p in given]
    found = [*ROOT.glob("kernel_lab/samples/kernels/*.py"), *ROOT.glob("kernel_lab/course/lessons/*/*.py")]
    found += [*ROOT.glob("benchmarks/teaching/*.py"), *ROOT.glob("tests/data/suite/*.py")]
    return sorted(p for p in found if "load_inline" in p.read_text() and "<<<" in p.read_text())


def build(cell: Path, env: dict[str, str]) -> dict[str, object]:
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", ONE, str(cell)], check=False, capture_output=True, text=True, env=env, cwd=cell.parent
    )
    row: dict[str, object] = {
        "cell": cell.name,
        "wall_s": time.perf_counter() - start,
        "split": "as written (the split build failed" not in done.stderr,
    }
    if done.returncode:
        row["error"] = (done.stderr.strip().splitlines() or ["?"])[-1][:160]
    else:
        row.update(json.loads(done.stdout.strip().splitlines()[-1]))
    return row


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("cells", nargs="*")
    parser.add_argument("--jobs", type=int, default=8)
    args = parser.parse_args()
    env = {**os.environ, "TORCH_EXTENSIONS_DIR": tempfile.mkdtemp(prefix="kl_fastbuild_")}
    todo = cells(args.cells)
    first = build(todo[0], env)  # alone: it also precompiles torch/extension.h
    print(json.dumps(first), flush=True)
    with ThreadPoolExecutor(args.jobs) as pool:
        rows = [first]
        for row in pool.map(lambda c: build(c, env), todo[1:]):
            print(json.dumps(row), flush=True)
            rows.append(row)
    steps: dict[str, list[float]] = {}
    for log in Path(env["TORCH_EXTENSIONS_DIR"]).glob("kernel_lab/fast/*/.ninja_log"):
        for line in log.read_text().splitlines()[1:]:  # start and end in ms, mtime, target, hash
            start_ms, end_ms, _, target, _ = line.split("\t")
            steps.setdefault(Path(target).name, []).append((int(end_ms) - int(start_ms)) / 1000)
    for target, took in sorted(steps.items()):
        print(f"ninja step {target}: median {sorted(took)[len(took) // 2]:.1f} s, max {max(took):.1f} s, {len(took)} builds")
    split = [r for r in rows[1:] if r["split"] and "error" not in r]
    times = sorted(float(r["built_s"]) for r in split)  # type: ignore[arg-type]
    print(
        f"{len(rows)} cells: {sum(bool(r['split']) for r in rows)} built split, {sum('error' in r for r in rows)} failed, "
        f"{sum(r.get('match') is False for r in rows)} differ from their reference; "
        f"first build (with the header) {first.get('built_s', '-')} s; "
        f"later split builds ({args.jobs} at a time): median {times[len(times) // 2] if times else '-'} s, max {times[-1] if times else '-'} s"
    )


if __name__ == "__main__":
    main()
