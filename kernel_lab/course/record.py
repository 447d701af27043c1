"""Record the course's Nsight Compute reports on a GPU machine (provenance of lessons/*/*.ncu-rep).

    python3 -m kernel_lab.course.record [--only LESSON ...] [--deadline S] [--out DIR] [--no-judge]

Run from the repository root with ``nvtx`` importable (kernel_lab/course/record.sh does the set-up).
Steps, each logged under ``<out>/logs``:

1. versions of the GPU, driver, ncu, nvcc, torch and triton;
2. every CUDA cell built in parallel (``load_inline`` into its own build folder, kernel_lab.builds);
3. every version of every lesson judged against its lesson's naive version on the GPU (correctness
   only, several at a time; timings are the ncu durations and the course's own checks);
4. one ncu run per recorded version with exactly Kernel Lab's collection, naive and reference
   versions of every lesson first, then attempts and examples, none started after ``--deadline``.

The ncu command is the one ``kernel_lab/samples/record.sh`` uses (every section of
``DEFAULT_SECTIONS``, ``--metrics EXTRA_METRICS``, ``--clock-control none``, source imported, the
NVTX range of the profiling runner), with ``-c 20`` (the product's default launch count) so cells
that launch several kernels are recorded whole.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

LESSONS = Path(__file__).resolve().parent / "lessons"
#: Examples that compute something else than their lesson's naive version (nothing to judge them against).
NOT_JUDGED = {"01_roofline/example_axpy", "01_roofline/example_gemm"}
T0 = time.monotonic()


def elapsed() -> float:
    return time.monotonic() - T0


def say(*parts) -> None:
    print(f"[{elapsed():5.0f}s]", *parts, flush=True)


def versions(only: list[str] | None) -> list[tuple[str, str, Path]]:
    """(lesson, role, cell) for every cell of the lessons asked for."""
    out = []
    for folder in sorted(p for p in LESSONS.iterdir() if p.is_dir() and p.name[:2].isdigit()):
        if only and folder.name not in only:
            continue
        for cell in sorted(folder.glob("*.py")):
            if cell.stem == "lesson":
                continue
            role = cell.stem.split("_", 1)[0]
            out.append((folder.name, role, cell))
    return out


def recorded(role: str) -> bool:
    return role in ("naive", "reference", "attempt", "example")


def build(cell: Path, logs: Path) -> tuple[str, int, float]:
    t = time.monotonic()
    code = (
        "import sys, runpy; from kernel_lab.builds import use_folder_for; "
        "use_folder_for(open(sys.argv[1]).read()); runpy.run_path(sys.argv[1])"
    )
    with open(logs / f"build_{cell.parent.name}_{cell.stem}.log", "w") as log:
        rc = subprocess.call([sys.executable, "-c", code, str(cell)], stdout=log, stderr=subprocess.STDOUT)
    return cell.stem, rc, time.monotonic() - t


def judge(lesson: str, cell: Path) -> dict:
    from kernel_lab.verify import verify

    t = time.monotonic()
    naive = (cell.parent / "naive.py").read_text()
    v = verify(naive, cell.read_text(), seeds=2, time=False, timeout=300)
    return {
        "lesson": lesson,
        "version": cell.stem,
        "correct": v.correct,
        "reason": v.reason,
        "warnings": list(v.warnings),
        "max_rel_err": v.max_rel_err,
        "seconds": round(time.monotonic() - t, 1),
    }


def ncu_command(cell: Path, report: Path, names: list[str] | None = None) -> list[str]:
    """The product's own collection (``%%profile``'s ncu command) of ``cell``'s kernels, as ``ncu`` on PATH."""
    from kernel_lab.cells import kernel_names
    from kernel_lab.profiling.ncu import build_command, kernel_filter

    chosen = names or kernel_names(cell.read_text())
    return build_command("ncu", cell, report.with_suffix(""), kernel_regex=kernel_filter(chosen))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", nargs="*", default=None, help="lesson folders (default: all)")
    parser.add_argument("--names", nargs="*", default=None, help="only these cells, as LESSON/NAME")
    parser.add_argument("--deadline", type=float, default=540.0, help="no ncu run starts after this many seconds")
    parser.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", "/tmp/kl_course_out")))
    parser.add_argument("--no-judge", action="store_true")
    parser.add_argument("--judge", nargs="*", default=None, help="judge only these lessons' versions")
    parser.add_argument("--jobs", type=int, default=8)
    args = parser.parse_args(argv)
    work = Path("/tmp/kl_course")
    logs, reports = work / "logs", work / "reports"
    logs.mkdir(parents=True, exist_ok=True)
    reports.mkdir(parents=True, exist_ok=True)
    args.out.mkdir(parents=True, exist_ok=True)

    cells = versions(args.only)
    if args.names:
        cells = [c for c in cells if f"{c[0]}/{c[2].stem}" in args.names]
    say("versions")
    info = subprocess.run(
        "nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv; "
        "ncu --version; nvcc --version | tail -2; date -u",
        shell=True,
        capture_output=True,
        text=True,
        check=False,
    ).stdout
    info += subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, torch, triton; print('python', sys.version.split()[0], "
            "'| torch', torch.__version__, 'cuda', torch.version.cuda, '| triton', triton.__version__)",
        ],
        capture_output=True,
        text=True,
        check=False,
    ).stdout
    (logs / "versions.txt").write_text(info)
    print(info, flush=True)

    cuda = [c for c in cells if "load_inline" in c[2].read_text()]
    say(f"building {len(cuda)} CUDA cells in parallel (in the background)")
    builder = ThreadPoolExecutor(len(cuda) or 1)
    builds = {c[2]: builder.submit(build, c[2], logs) for c in cuda}

    if not args.no_judge:
        say("judging every version against its naive version (correctness, GPU)")
        todo = [
            c
            for c in cells
            if c[1] != "naive" and f"{c[0]}/{c[2].stem}" not in NOT_JUDGED and (args.judge is None or c[0] in args.judge)
        ]
        for c in todo:
            if c[2] in builds or (c[2].parent / "naive.py") in builds:
                for f in (builds.get(c[2]), builds.get(c[2].parent / "naive.py")):
                    if f is not None:
                        f.result()
        results = []
        with ThreadPoolExecutor(args.jobs) as pool:
            for r in pool.map(lambda c: judge(c[0], c[2]), todo):
                results.append(r)
                say(
                    f"JUDGE {r['lesson']}/{r['version']}: {'correct' if r['correct'] else 'WRONG'}"
                    f"{' FLAGGED' if r['warnings'] else ''} ({r['seconds']}s) {r['reason'][:160]} {r['warnings'][:1]}"
                )
        (logs / "judge.json").write_text(json.dumps(results, indent=1))

    order = sorted(
        (c for c in cells if recorded(c[1])), key=lambda c: (c[2] in builds, c[1] not in ("naive", "reference"), c[0], c[1])
    )
    summary = []
    for lesson, _role, cell in order:
        if cell in builds:
            name, built, seconds = builds[cell].result()
            say(f"built {cell.parent.name}/{name}: rc={built} in {seconds:.0f}s")
        if elapsed() > args.deadline:
            say(f"SKIP {lesson}/{cell.stem} (deadline)")
            summary.append({"lesson": lesson, "version": cell.stem, "skipped": True})
            continue
        (reports / lesson).mkdir(exist_ok=True)
        report = reports / lesson / f"{cell.stem}.ncu-rep"
        t = time.monotonic()
        # A fresh Triton cache: a kernel compiled earlier from another file (the judge's copy of the cell)
        # would keep that file's name in its line info, and the report would embed no source.
        env = {**os.environ, "TRITON_CACHE_DIR": str(work / "triton_cache" / f"{lesson}_{cell.stem}")}
        with open(logs / f"ncu_{lesson}_{cell.stem}.log", "w") as log:
            try:
                rc = str(subprocess.call(ncu_command(cell, report), stdout=log, stderr=subprocess.STDOUT, env=env, timeout=150))
            except subprocess.TimeoutExpired:
                rc = "timeout"
        text = (logs / f"ncu_{lesson}_{cell.stem}.log").read_text(errors="replace")
        passes = re.findall(r'==PROF== Profiling "([^"]+)".*?(\d+) passes', text)
        row = {
            "lesson": lesson,
            "version": cell.stem,
            "rc": rc,
            "seconds": round(time.monotonic() - t, 1),
            "size": report.stat().st_size if report.exists() else None,
            "kernels": passes,
            "errors": [line for line in text.splitlines() if "==ERROR==" in line][:3],
        }
        summary.append(row)
        say(f"NCU {lesson}/{cell.stem}: rc={rc} {row['seconds']}s size={row['size']} {passes}")
    (logs / "ncu.json").write_text(json.dumps(summary, indent=1))
    (logs / "command.txt").write_text(" ".join(ncu_command(Path("CELL.py"), Path("REPORT.ncu-rep"), ["KERNEL"])) + "\n")

    for f in builds.values():
        f.result()
    builder.shutdown()
    say("packing")
    lessons = sorted({c[0] for c in cells})
    groups = [lessons[i::3] for i in range(3)]
    for i, group in enumerate(groups):
        names = [str(Path(g)) for g in group if (reports / g).exists()]
        if names:
            subprocess.call(["tar", "cf", str(args.out / f"reports_{i}.tar"), *names], cwd=reports)
    subprocess.call(
        [
            "tar",
            "czf",
            str(
                args.out / "logs.tar.gz",
            ),
            "logs",
        ],
        cwd=work,
    )
    say("done")
    return 0


if __name__ == "__main__":
    sys.exit(main())
