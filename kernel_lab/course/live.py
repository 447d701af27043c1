"""Run every lesson live on a GPU machine (how the course was run once on the H100).

    python3 -m kernel_lab.course.live [--only LESSON ...] [--deadline S] [--out DIR]

Each lesson notebook's code cells run in order in a fresh IPython shell (no Jupyter needed), in a
temporary folder: the ``%%profile --or-replay`` cells profile the cell live with Nsight Compute, and the
fix cell (``%%writefile fix_<lesson>.py``) is given the lesson's reference solution, so the
``course.check`` that follows judges it, times it and profiles it live. The CUDA cells are built in
parallel first (in the background). A summary (``live.json``) and each lesson's printed output
(``live_<lesson>.txt``) go to ``--out``; the last lines printed are a table of what each lesson measured.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent.parent
T0 = time.monotonic()


def say(*parts: Any) -> None:
    print(f"[{time.monotonic() - T0:5.0f}s]", *parts, flush=True)


def _build(cell: Path) -> tuple[str, int, float]:
    t = time.monotonic()
    code = "import sys, runpy; from kernel_lab.builds import use_folder_for; use_folder_for(open(sys.argv[1]).read()); runpy.run_path(sys.argv[1])"
    rc = subprocess.call([sys.executable, "-c", code, str(cell)], stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    return f"{cell.parent.name}/{cell.stem}", rc, time.monotonic() - t


def run_lesson(lesson_id: str, out: Path) -> dict[str, Any]:
    """Run one lesson's notebook live; returns what it measured."""
    from IPython.core.interactiveshell import InteractiveShell

    from kernel_lab import course
    from kernel_lab.course.checking import CheckResult
    from kernel_lab.results.profile import Result

    notebook = json.loads((ROOT / "notebooks" / f"{lesson_id}.ipynb").read_text())
    fix = course.lesson(lesson_id).fix
    assert fix is not None
    reference = course.cell(lesson_id, fix.reference)
    work = tempfile.mkdtemp(prefix=f"kl_live_{lesson_id}_")
    here = os.getcwd()
    os.chdir(work)
    InteractiveShell.clear_instance()
    shell = InteractiveShell.instance()
    summary: dict[str, Any] = {"lesson": lesson_id, "cells": [], "profiles": [], "checks": []}
    log = io.StringIO()
    try:
        for cell in notebook["cells"]:
            if cell["cell_type"] != "code":
                continue
            source = "".join(cell["source"])
            if source.startswith("%%writefile fix_"):
                source = source.split("\n", 1)[0] + "\n" + reference  # the reference solution goes through the check
            t = time.monotonic()
            with contextlib.redirect_stdout(log), contextlib.redirect_stderr(log):
                print(f"\n>>> {source.splitlines()[0][:120]}")
                result = shell.run_cell(source, store_history=True)  # the shell prints the value itself
                value = result.result
            error = result.error_before_exec or result.error_in_exec
            row = {"first_line": source.splitlines()[0][:120], "seconds": round(time.monotonic() - t, 1)}
            if error is not None:
                row["error"] = f"{type(error).__name__}: {str(error)[:500]}"
            summary["cells"].append(row)
            if isinstance(value, Result):
                summary["profiles"].append(
                    {
                        "replay": value.profile.replay,
                        "kernels": [
                            {
                                "name": d.kernel.name,
                                "duration_us": (d.kernel.get("gpu__time_duration.sum") or 0) / 1000,
                                "top": d.bottlenecks[0].kind if d.bottlenecks else None,
                            }
                            for d in value.diagnoses
                        ],
                    }
                )
            if isinstance(value, CheckResult):
                yours = value.yours
                summary["checks"].append(
                    {
                        "status": value.status,
                        "score": value.score,
                        "gpu": value.gpu,
                        "speedup": value.verdict.timing.speedup if value.verdict and value.verdict.timing else None,
                        "duration_us": yours.duration_us if yours else None,
                        "roof_fraction": yours.roof_fraction if yours else None,
                        "top": yours.top.kind if yours and yours.top else None,
                        "text": str(value)[:3000],
                    }
                )
    finally:
        os.chdir(here)
        (out / f"live_{lesson_id}.txt").write_text(log.getvalue())
    return summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", nargs="*", default=None)
    parser.add_argument("--deadline", type=float, default=540.0, help="no lesson starts after this many seconds")
    parser.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", "/tmp/kl_live_out")))
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    from kernel_lab import course

    lessons = [x.id for x in course.lessons() if not args.only or x.id in args.only]
    cuda = [x for x in lessons if course.lesson(x).language == "cuda"]
    cells = [course.catalog.cell_path(x, v) for x in cuda for v in ("naive", "reference")]
    builder = ThreadPoolExecutor(len(cells) or 1)
    builds = [builder.submit(_build, c) for c in cells]
    say(f"building {len(cells)} CUDA cells in the background")
    triton = [x for x in lessons if x not in cuda]
    last = [x for x in triton[2:] if x.startswith("09_")]  # %%optimize: the longest lesson
    order = triton[:2] + cuda + [x for x in triton[2:] if x not in last] + last  # CUDA builds finish during the first two
    results = []
    for lesson_id in order:
        if time.monotonic() - T0 > args.deadline:
            say(f"SKIP {lesson_id} (deadline)")
            results.append({"lesson": lesson_id, "skipped": True})
            continue
        if lesson_id in cuda:
            for f in builds:
                name, rc, seconds = f.result()
                say(f"built {name}: rc={rc} in {seconds:.0f}s")
            builds = []
        t = time.monotonic()
        try:
            summary = run_lesson(lesson_id, args.out)
        except Exception as exc:  # noqa: BLE001 - one broken lesson does not stop the others
            summary = {"lesson": lesson_id, "failed": f"{type(exc).__name__}: {exc}"}
        summary["seconds"] = round(time.monotonic() - t, 1)
        errors = [c for c in summary.get("cells", []) if "error" in c]
        say(f"{lesson_id}: {summary['seconds']}s, {len(summary.get('cells', []))} cells, {len(errors)} errors {errors[:2]}")
        results.append(summary)
        (args.out / "live.json").write_text(json.dumps(results, indent=1))
    builder.shutdown()
    print(
        "\nlesson               profiled live (µs, top bottleneck)                       reference check: status, speedup, roof"
    )
    for r in results:
        if r.get("skipped") or r.get("failed"):
            print(f"{r['lesson']:20s} {'skipped' if r.get('skipped') else r['failed'][:100]}")
            continue
        profiled = "; ".join(
            f"{k['name']} {k['duration_us']:.1f} ({k['top']})" + (" REPLAYED" if p["replay"] else "")
            for p in r["profiles"]
            for k in p["kernels"]
        )
        checks = "; ".join(
            f"{c['status']} {c['score']}"
            + (f", {c['speedup']:.2f}x" if c["speedup"] else "")
            + (f", {c['roof_fraction']:.0%} of the roof (problem's work)" if c["roof_fraction"] else "")
            for c in r["checks"]
        )
        print(f"{r['lesson']:20s} {profiled[:80]:80s} {checks}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
