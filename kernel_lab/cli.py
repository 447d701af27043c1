"""Command line: ``kernel-lab profile SCRIPT.py``, ``kernel-lab diagnose REPORT``, ``kernel-lab optimize SCRIPT.py``,
``kernel-lab bench-rewriter --model M``."""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

from kernel_lab import options
from kernel_lab.display.progress import Progress as OptimizeProgress
from kernel_lab.errors import CellError, KernelLabError
from kernel_lab.loop import Event
from kernel_lab.profiling import Progress, live
from kernel_lab.settings import Settings


def _progress(event: Progress) -> None:
    done = f" - {event.passes} passes" if event.passes else ""
    sys.stderr.write(f"\r[kernel {event.number}] {event.kernel}: {event.percent:3d}%{done}   ")
    if event.passes:
        sys.stderr.write("\n")
    sys.stderr.flush()


def _suite_progress(cells: dict) -> None:
    counts = {state: sum(c.get("status") == state for c in cells.values()) for state in ("done", "running", "waiting", "failed")}
    best = [f"{name} {c['best']}" for name, c in cells.items() if c.get("best")]
    line = " · ".join(f"{n} {state}" for state, n in counts.items() if n) + (
        f" | best so far: {', '.join(best[-3:])}" if best else ""
    )
    if sys.stderr.isatty():  # rewritten in place: no longer than the terminal is wide
        sys.stderr.write("\r\033[K" + line[: shutil.get_terminal_size().columns - 1])
    else:
        sys.stderr.write(line + "\n")
    sys.stderr.flush()


class _Events:
    """The loop's events on stderr: every step as a line, and in a terminal a status line rewritten in place.

    Notes (replay mode, CPU times) are left to the summary, which prints them once.
    """

    def __init__(self) -> None:
        self.progress = OptimizeProgress()
        self.live = sys.stderr.isatty()

    def __call__(self, event: Event) -> None:
        self.progress.add(event)
        if event.state == "note":
            return
        if self.live:  # the status line fits the terminal, or the carriage return could not rewrite it in place
            width = shutil.get_terminal_size().columns - 1
            sys.stderr.write("\r\033[K" + event.message + "\n\033[K" + self.progress.line()[:width] + "\r")
        else:
            sys.stderr.write(event.message + "\n")
        sys.stderr.flush()


BENCH = tuple(name for name in options.OPTIMIZE if name != "rewriter")  # bench-rewriter measures the LLM rewriter


def _bench(args: argparse.Namespace) -> int:
    """``kernel-lab bench-rewriter``: the table on stdout, the loop's progress on stderr."""
    from kernel_lab.profiling.ncu import has_gpu
    from kernel_lab.rewriter_bench import CPU_LINE, bench_rewriter, cells_in

    settings = Settings.resolve({**options.given(args, BENCH), "rewriter": "llm"})
    if not settings.model:
        raise KernelLabError("bench-rewriter measures a model: give --model NAME.", fix="Or set KERNEL_LAB_MODEL.")
    cells, gpu = cells_in(args.cells), has_gpu()
    if not gpu:
        print(CPU_LINE, file=sys.stderr, flush=True)
    print(bench_rewriter(cells, settings, gpu=gpu, on_event=_Events()).text())
    return 0


def parser() -> argparse.ArgumentParser:
    main = argparse.ArgumentParser(prog="kernel-lab", description="Profiling-guided GPU kernel optimization.")
    sub = main.add_subparsers(dest="command", required=True)
    prof = sub.add_parser("profile", help="profile a script's kernels with Nsight Compute and write a report")
    prof.add_argument("script", type=Path)
    prof.add_argument("-o", "--output", type=Path, help="report path (default: SCRIPT.ncu-rep)")
    prof.add_argument("--json", action="store_true", help="print the diagnosis as JSON")
    options.add(prof, options.PROFILE)
    diag = sub.add_parser("diagnose", help="print the ranked bottlenecks of a recorded report (no GPU needed)")
    diag.add_argument("report", type=Path)
    diag.add_argument("--json", action="store_true", help="print the diagnosis as JSON")
    for sub_parser in (prof, diag):
        sub_parser.add_argument("--html", type=Path, help="also write the diagnosis as a standalone HTML page")
    suite = sub.add_parser("optimize-suite", help="optimize every cell of a folder or glob, spread over GPUs with Ray")
    suite.add_argument("cells", help="a folder of .py cells, or a glob such as 'kernels/*.py'")
    suite.add_argument("--gpus", help="how many of this machine's GPUs to use, or 'all' (default: all)")
    suite.add_argument("--ray", dest="ray_address", help="a Ray cluster's address ('auto': the one this machine is in)")
    suite.add_argument("--replay", help="diagnose every cell from this recorded report (no GPU; one round)")
    suite.add_argument("--json", action="store_true", help="print the suite's report as JSON")
    suite.add_argument("--fresh", action="store_true", help="start over instead of resuming a suite that stopped")
    options.add(suite, options.OPTIMIZE)
    sub.add_parser(
        "install-kernel", help=f"install the Jupyter kernel '{live.DISPLAY_NAME}': %%%%profile then profiles cells in place"
    )
    opt = sub.add_parser("optimize", help="rewrite a cell's kernel, verify and keep every version")
    opt.add_argument("script", type=Path)
    opt.add_argument("--replay", help="diagnose from this recorded report instead of profiling (no GPU; one round)")
    options.add(opt, options.OPTIMIZE)
    bench = sub.add_parser("bench-rewriter", help="measure a model as the LLM rewriter over a folder of naive cells")
    bench.add_argument("--cells", type=Path, help="a folder of .py cells (default: the course's naive kernels)")
    options.add(bench, BENCH)
    return main


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)

    from kernel_lab import api

    try:
        if args.command == "optimize-suite":
            from kernel_lab.suite import optimize_suite

            settings = Settings.resolve(options.given(args, options.OPTIMIZE))
            report = optimize_suite(
                args.cells,
                gpus=args.gpus,
                ray_address=args.ray_address,
                replay=args.replay,
                fresh=args.fresh,
                settings=settings,
                on_progress=_suite_progress,
            )
            sys.stderr.write("\n")
            print(report.to_json(indent=2) if args.json else report)
            return 0
        if args.command == "install-kernel":
            where = live.install()
            print(
                f"Installed '{live.DISPLAY_NAME}' in {where}. Pick it as a notebook's kernel: %%profile then profiles "
                "cells in place, with the notebook's variables (it needs a GPU and Nsight Compute; elsewhere it says why)."
            )
            return 0
        if args.command == "bench-rewriter":
            return _bench(args)
        if args.command == "optimize":
            settings = Settings.resolve(options.given(args, options.OPTIMIZE))
            print(api.optimize(args.script, replay=args.replay, on_event=_Events(), settings=settings))
            return 0
        if args.command == "diagnose":
            result = api.diagnose(args.report)
        else:
            output = args.output or args.script.with_suffix(".ncu-rep")
            settings = Settings.resolve(options.given(args, options.PROFILE))
            result = api.profile(args.script, output=output, on_progress=_progress, settings=settings)
            print(f"report written to {output}", file=sys.stderr)
    except CellError as err:
        print(err.traceback, file=sys.stderr)
        print(f"kernel-lab: {err}", file=sys.stderr)
        return 2
    except KernelLabError as err:
        print(f"kernel-lab: {err}", file=sys.stderr)
        return 2
    if args.html:
        result.save_html(args.html)
        print(f"diagnosis page written to {args.html}", file=sys.stderr)
    if args.json:
        print(result.to_json(indent=2))
    else:
        print(result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
