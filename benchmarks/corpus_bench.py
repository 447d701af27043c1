"""The corpus's kernels against PyTorch and torch.compile, and the search's coverage of their launches (on the GPU).

    python benchmarks/corpus_bench.py [--json OUT.jsonl] [CELL.py ...]   (default: every cell of tests/cells/corpus)

For each cell, in one process, on its first declared shape: ``triton.testing.do_bench`` (median, L2 flushed) of the
cell's ``run`` (the library's kernels, launched as the library launches them), of ``torch_run`` (the same function
in plain PyTorch) and of ``torch.compile(torch_run)`` (with the seconds its first call took to compile), the largest
difference between ``run`` and ``torch_run``, and what the search can tune in each launch
(:mod:`kernel_lab.rewrite.launch`). A table at 100 columns last.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch
import triton.testing
from record_cells import inputs_of, load

from kernel_lab.rewrite.launch import describe, launches

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "cells" / "corpus"


def bench(fn) -> float:
    return float(triton.testing.do_bench(fn, return_mode="median"))


def largest_error(a, b) -> float:
    if isinstance(a, (tuple, list)):
        return max((largest_error(x, y) for x, y in zip(a, b)), default=0.0)
    return float((a.float() - b.float()).abs().max()) if a.numel() else 0.0


def one(path: Path) -> dict:
    module = load(path)
    inputs = inputs_of(module)
    row: dict = {"cell": path.stem, "coverage": [describe(x) for x in launches(path.read_text())]}
    row["error"] = largest_error(module.run(*inputs), module.torch_run(*inputs))
    row["run_ms"] = bench(lambda: module.run(*inputs))
    row["torch_ms"] = bench(lambda: module.torch_run(*inputs))
    compiled = torch.compile(module.torch_run)
    started = time.perf_counter()
    compiled(*inputs)
    torch.cuda.synchronize()
    row["compile_s"] = time.perf_counter() - started
    row["compiled_ms"] = bench(lambda: compiled(*inputs))
    return row


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("cells", nargs="*", type=Path)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    cells = args.cells or sorted(p for p in CORPUS.glob("*.py") if p.name != "check.py")
    rows = []
    for path in cells:
        try:
            rows.append(one(path))
        except Exception as exc:  # noqa: BLE001 - a cell that fails is reported, the others go on
            rows.append({"cell": path.stem, "failed": f"{type(exc).__name__}: {str(exc)[:200]}"})
        print(json.dumps(rows[-1]), flush=True)
        if args.json:
            args.json.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
        torch._dynamo.reset()
    print(f"{'cell':34} {'run ms':>9} {'torch ms':>9} {'compiled ms':>11} {'compile s':>9} {'max err':>9}")
    for r in rows:
        if "failed" in r:
            print(f"{r['cell']:34} failed: {r['failed'][:60]}")
        else:
            print(
                f"{r['cell']:34} {r['run_ms']:9.4f} {r['torch_ms']:9.4f} {r['compiled_ms']:11.4f} {r['compile_s']:9.1f}"
                f" {r['error']:9.2e}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
