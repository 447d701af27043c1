"""Runs a cell file in a fresh process, the way ``%%profile`` wants it profiled.

    python -m kernel_lab.profiling.runner CELL.py [--no-warmup] [--trace OUT.json]
    python -m kernel_lab.profiling.runner --wait-for FILE --owner PID [...]
        started ahead: loads torch and CUDA, then waits for FILE to hold the cell's path (or for the
        process PID to be gone, when it ends unused)

A cell either follows the Kernel Lab convention (it defines ``make_inputs()`` and
``run(*inputs)``) or is plain code. Either way the first execution (Triton JIT compile,
autotuning, allocations) happens *outside* the NVTX range ``kernel_lab@profile``, and one
more execution happens inside it, so ``ncu --nvtx-include kernel_lab@profile/`` profiles only
the user's steady-state launches.

With ``--trace`` the profiled execution is recorded with ``torch.profiler`` instead (kernel
names, durations and launch configuration, no hardware counters): the fallback when
counters are not permitted.

Lines starting with ``==KERNEL_LAB==`` on stdout report the phase; a failure of the cell
exits with status 3 after printing the user's traceback (runner frames removed) on stderr.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from kernel_lab import fastbuild
from kernel_lab.builds import use_folder_for
from kernel_lab.cells import execute, user_traceback
from kernel_lab.errors import CellError
from kernel_lab.processes import child_env
from kernel_lab.profiling import launches
from kernel_lab.profiling.sections import NVTX_DOMAIN, NVTX_RANGE

MARK = "==KERNEL_LAB=="
CELL_ERROR_EXIT = 3


def profiling_env() -> dict[str, str]:
    """The environment a profiled cell runs in: CUDA sources built by load_inline get line info, so hot
    spots map to source lines."""
    return child_env(NVCC_APPEND_FLAGS=" ".join(filter(None, (os.environ.get("NVCC_APPEND_FLAGS"), "-lineinfo"))))


def cell_error(stderr: str) -> CellError:
    """The one-line error for a cell that failed in the runner, with the user's own traceback."""
    tb = "\n".join(
        line for line in stderr.splitlines() if not line.startswith(("==PROF==", "==ERROR==", "==WARNING==", MARK))
    ).strip()
    last = tb.splitlines()[-1] if tb else "the cell failed"
    fix = "Fix the cell and run it again."
    if last.startswith("NameError"):
        fix = "The cell runs in a fresh process: define or import everything it uses inside the cell."
    return CellError(f"The cell raised {last}", tb, fix=fix)


def _say(phase: str) -> None:
    print(f"{MARK} {phase}", flush=True)


def _synchronize() -> None:
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available() and torch.cuda.is_initialized():
        torch.cuda.synchronize()


@contextlib.contextmanager
def _profiled_range(trace: Path | None) -> Iterator[None]:
    import nvtx

    tracer = None
    if trace is not None:
        import torch.profiler as tp

        cuda = [a for a in tp.supported_activities() if a == tp.ProfilerActivity.CUDA]
        tracer = tp.profile(activities=cuda or [tp.ProfilerActivity.CPU])  # no CUDA (a CPU-only torch): no kernels
        tracer.__enter__()
    nvtx.push_range(NVTX_RANGE, domain=NVTX_DOMAIN)
    try:
        yield
        _synchronize()
    finally:
        nvtx.pop_range(domain=NVTX_DOMAIN)
        if tracer is not None:
            tracer.__exit__(None, None, None)
            tracer.export_chrome_trace(str(trace))


def run_cell(cell: Path, warmup: bool = True, trace: Path | None = None, record: Path | None = None) -> None:
    """Execute ``cell`` (warm-up, then once inside the profiled range); ``record``: where to write what the profiled
    ``run`` took, returned and launched (:mod:`kernel_lab.profiling.launches`)."""
    filename = str(cell.resolve())
    source = cell.read_text()
    compile(source, filename, "exec")  # a syntax error fails before any warm-up
    if use_folder_for(source):  # a load_inline cell: it builds in seconds, and the judge finds the build
        fastbuild.install()

    def run_once() -> dict:
        return execute(source, filename, {"__name__": "__main__", "__file__": filename})

    _say("warm-up" if warmup else "setup")
    namespace = run_once() if warmup else {}
    run: Callable = namespace.get("run", None) or (lambda *inputs: None)
    make_inputs: Callable = namespace.get("make_inputs", None) or tuple
    conventional = callable(namespace.get("run")) and callable(namespace.get("make_inputs"))
    inputs: tuple = ()
    if conventional:
        inputs = make_inputs()
        run(*inputs)  # JIT compile and autotune happen here, outside the range
    _synchronize()
    _say("profile")
    recorder = launches.Recorder() if record is not None else None
    with _profiled_range(trace), recorder.recording() if recorder else contextlib.nullcontext():
        if conventional:
            output = run(*inputs)
        elif warmup:
            with contextlib.redirect_stdout(io.StringIO()):  # the cell already printed once
                run_once()
        else:
            run_once()
    if recorder is not None and record is not None:
        launches.save(recorder.record(inputs, output if conventional else None), record)
    _say("done")


def ready() -> None:
    """Load what a cell's run needs before its path is known: torch, Triton, and a CUDA context (made by a
    synchronize, which launches no kernel)."""
    import importlib.util

    if importlib.util.find_spec("torch") is not None:
        import torch

        if torch.cuda.is_available():
            torch.cuda.synchronize()
    if importlib.util.find_spec("triton") is not None:
        import triton  # noqa: F401
    import nvtx  # noqa: F401

    _say("ready")


def wait_for(request: Path, owner: int | None) -> str | None:
    """The cell path that ``request`` holds once it exists; None when ``owner`` (the process that started
    this one ahead) is gone first."""
    while not request.exists():
        if owner is not None:
            try:
                os.kill(owner, 0)
            except ProcessLookupError:
                return None
            except PermissionError:
                pass  # there, but not ours to signal
        time.sleep(0.02)
    return request.read_text().strip()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m kernel_lab.profiling.runner")
    parser.add_argument("cell", nargs="?", help="the cell's file (not with --wait-for)")
    parser.add_argument("--no-warmup", dest="warmup", action="store_false")
    parser.add_argument("--trace", type=Path, default=None)
    parser.add_argument("--wait-for", type=Path, default=None, help="a file that will hold the cell's path")
    parser.add_argument("--owner", type=int, default=None, help="with --wait-for: end when this process is gone")
    parser.add_argument("--record", type=Path, default=None, help="where to write what the profiled run launched")
    args = parser.parse_args(argv)
    if args.wait_for is not None:
        ready()
        args.cell = wait_for(args.wait_for, args.owner)
        if args.cell is None:
            return 0  # let go unused
    if args.cell is None:
        parser.error("a cell file is needed")
    args.cell = Path(args.cell)
    filename = str(args.cell.resolve())
    try:
        run_cell(args.cell, warmup=args.warmup, trace=args.trace, record=args.record)
    except BaseException as exc:  # noqa: BLE001 - report any failure of the user's code
        if isinstance(exc, SystemExit) and not exc.code:
            return 0
        _say("cell-error")
        sys.stderr.write(user_traceback(exc, filename))
        return CELL_ERROR_EXIT
    return 0


if __name__ == "__main__":
    sys.exit(main())
