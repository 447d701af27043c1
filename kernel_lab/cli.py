"""Command line: ``kernel-lab profile SCRIPT.py`` and ``kernel-lab diagnose REPORT``."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from kernel_lab.errors import CellError, KernelLabError
from kernel_lab.profiling.sections import DEFAULT_SECTIONS


def _progress(event) -> None:
    done = f" - {event.passes} passes" if event.passes else ""
    sys.stderr.write(f"\r[kernel {event.number}] {event.kernel}: {event.percent:3d}%{done}   ")
    if event.passes:
        sys.stderr.write("\n")
    sys.stderr.flush()


def add_profile_options(parser: argparse.ArgumentParser) -> None:
    """Options shared by ``kernel-lab profile`` and ``%%profile``."""
    parser.add_argument("-k", "--kernels", help="regex of kernel names to profile (default: kernels defined in the code)")
    parser.add_argument("--all-kernels", action="store_true", help="profile every kernel in the profiled range")
    parser.add_argument("--section", action="append", dest="sections", help="ncu section to collect (repeatable)")
    parser.add_argument("--set", dest="section_set", help="ncu section set instead of sections, e.g. full")
    parser.add_argument("-c", "--launch-count", type=int, default=20, help="profile at most this many launches")
    parser.add_argument("--no-warmup", dest="warmup", action="store_false", help="do not run the code once before profiling")
    parser.add_argument("--timeout", type=float, default=600.0, help="stop profiling after this many seconds")


def profile_kwargs(args: argparse.Namespace) -> dict:
    return {
        "kernels": ".*" if args.all_kernels else args.kernels,
        "sections": args.sections or DEFAULT_SECTIONS,
        "section_set": args.section_set,
        "launch_count": args.launch_count,
        "warmup": args.warmup,
        "timeout": args.timeout,
    }


def add_optimize_options(parser: argparse.ArgumentParser) -> None:
    """Options shared by ``kernel-lab optimize`` and ``%%optimize``."""
    parser.add_argument("--rounds", type=int, default=3, help="at most this many rounds (default 3)")
    parser.add_argument("--rewriter", choices=("search", "llm"), default=None, help="default: llm if a model is configured, else search")
    parser.add_argument("--model", help="LLM model name (else $KERNEL_LAB_MODEL)")
    parser.add_argument("--base-url", help="OpenAI-compatible server (else $OPENAI_BASE_URL)")
    parser.add_argument("--candidates", type=int, default=4, help="candidates verified per round")
    parser.add_argument("--time-budget", type=float, help="stop starting new rounds after this many seconds")
    parser.add_argument("--seeds", type=int, default=3, help="fresh random input sets per check")
    parser.add_argument("--rtol", type=float, help="relative tolerance (default: by dtype)")
    parser.add_argument("--atol", type=float, help="absolute tolerance (default: by dtype)")
    parser.add_argument("--replay", help="diagnose from this recorded report instead of profiling (no GPU; one round)")
    parser.add_argument("--root", default=".kernel_lab", help="where sessions are kept")


def optimize_kwargs(args: argparse.Namespace) -> dict:
    import os

    rewriter = args.rewriter or ("llm" if (args.model or os.environ.get("KERNEL_LAB_MODEL")) else "search")
    return {
        "rounds": args.rounds, "rewriter": rewriter, "model": args.model, "base_url": args.base_url,
        "candidates": args.candidates, "time_budget": args.time_budget, "seeds": args.seeds,
        "rtol": args.rtol, "atol": args.atol, "replay": args.replay, "root": args.root,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="kernel-lab", description="Profiling-guided GPU kernel optimization.")
    sub = parser.add_subparsers(dest="command", required=True)
    prof = sub.add_parser("profile", help="profile a script's kernels with Nsight Compute and write a report")
    prof.add_argument("script", type=Path)
    prof.add_argument("-o", "--output", type=Path, help="report path (default: SCRIPT.ncu-rep)")
    prof.add_argument("--json", action="store_true", help="print the diagnosis as JSON")
    add_profile_options(prof)
    diag = sub.add_parser("diagnose", help="print the ranked bottlenecks of a recorded report (no GPU needed)")
    diag.add_argument("report", type=Path)
    diag.add_argument("--json", action="store_true", help="print the diagnosis as JSON")
    for sub_parser in (prof, diag):
        sub_parser.add_argument("--html", type=Path, help="also write the diagnosis as a standalone HTML page")
    opt = sub.add_parser("optimize", help="rewrite a cell's kernel, verify and keep every version")
    opt.add_argument("script", type=Path)
    add_optimize_options(opt)
    args = parser.parse_args(argv)

    from kernel_lab import api

    try:
        if args.command == "optimize":
            outcome = api.optimize(args.script, on_event=lambda m: print(m, file=sys.stderr, flush=True), **optimize_kwargs(args))
            print(outcome)
            return 0
        if args.command == "diagnose":
            result = api.diagnose(args.report)
        else:
            output = args.output or args.script.with_suffix(".ncu-rep")
            result = api.profile(args.script, output=output, on_progress=_progress, **profile_kwargs(args))
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
