"""The core API the magics, the CLI and the widgets call: profile, diagnose, compare, optimize."""
from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from kernel_lab.analysis import conductor
from kernel_lab.analysis.compare import Comparison
from kernel_lab.analysis.compare import compare as compare_diagnoses
from kernel_lab.errors import CellError, KernelLabError, NoKernelMatchedError, ProfilingError
from kernel_lab.models import Profile
from kernel_lab.profiling import ncu, report, trace
from kernel_lab.profiling.runner import CELL_ERROR_EXIT, MARK
from kernel_lab.profiling.sections import DEFAULT_SECTIONS
from kernel_lab.result import Result

if TYPE_CHECKING:
    from kernel_lab.optimizing import OptimizeResult

COUNTERS_REFUSED = "ERR_NVGPUCTRPERM"
ENABLE_COUNTERS = (
    "GPU performance counters are not permitted for this user (ncu: ERR_NVGPUCTRPERM). To enable them, run as root"
    " or set the driver option NVreg_RestrictProfilingToAdminUsers=0 (see"
    " https://developer.nvidia.com/ERR_NVGPUCTRPERM); in a container, start it with --cap-add=SYS_ADMIN."
)


def analyze(profile: Profile) -> Result:
    """Run the conductor over a profile."""
    return Result(profile, tuple(conductor.diagnose(profile)))


def diagnose(path: str | Path) -> Result:
    """Diagnose a recorded ``.ncu-rep`` report (or a torch.profiler ``.json`` trace); no GPU needed."""
    path = Path(path)
    if path.suffix in (".json", ".gz"):
        return analyze(replace(trace.load(path), replay=True))
    return analyze(report.load(path, replay=True))


def compare(before: Result | str | Path, after: Result | str | Path, kernel: str | None = None) -> Comparison:
    """Before/after of a kernel in two results or reports (``kernel``: its name; default the first)."""
    pick = []
    for side in (before, after):
        result = side if isinstance(side, Result) else diagnose(side)
        matches = [d for d in result.diagnoses if kernel is None or d.kernel.name == kernel]
        if not matches:
            raise KernelLabError(
                f"No kernel named {kernel!r} in {result.profile.origin}.",
                fix="Kernels there: " + ", ".join(d.kernel.name for d in result.diagnoses) + ".",
            )
        pick.append(matches[0])
    return compare_diagnoses(*pick)


def _cell_file(cell: str | Path) -> Path | None:
    """The path when ``cell`` names a ``.py`` file rather than holding source text."""
    if isinstance(cell, Path) or (cell.endswith(".py") and "\n" not in cell):
        return Path(cell).resolve()
    return None


def _kernel_regex(kernels: str | Sequence[str] | None, source: str) -> str | None:
    if kernels is None:
        names = ncu.kernel_names(source)
        return ncu.kernel_filter(names) if names else None
    if isinstance(kernels, str):
        return kernels if kernels.startswith("regex:") else f"regex:{kernels}"
    return ncu.kernel_filter(list(kernels))


def _environment() -> dict[str, str]:
    env = dict(os.environ)
    package_root = str(Path(__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p)
    env["PYTHONUNBUFFERED"] = "1"
    # line info for CUDA sources built with load_inline, so hot spots map to source lines
    env["NVCC_APPEND_FLAGS"] = " ".join(filter(None, (env.get("NVCC_APPEND_FLAGS"), "-lineinfo")))
    return env


def _user_traceback(stderr: str) -> str:
    return "\n".join(line for line in stderr.splitlines() if not line.startswith(("==PROF==", "==ERROR==", "==WARNING==", MARK)))


def _cell_error(stderr: str) -> CellError:
    tb = _user_traceback(stderr).strip()
    last = tb.splitlines()[-1] if tb else "the cell failed"
    fix = "Fix the cell and run it again."
    if last.startswith("NameError"):
        fix = "The cell runs in a fresh process: define or import everything it uses inside the cell."
    return CellError(f"The cell raised {last}", tb, fix=fix)


def _trace_profile(cell: Path, env: dict, timeout: float | None, only: set[str] | None) -> Profile:
    out = cell.with_suffix(".trace.json")
    cmd = [sys.executable, "-m", "kernel_lab.profiling.runner", str(cell), "--trace", str(out)]
    code, _, err = ncu.run(cmd, env=env, timeout=timeout)
    if code == CELL_ERROR_EXIT:
        raise _cell_error(err)
    if code != 0 or not out.exists():
        raise ProfilingError("Recording a torch.profiler trace of the cell failed.", err[-2000:], fix="See the log above.")
    return trace.load(out, only=only)


def classify(code: int, stdout: str, stderr: str, report_written: bool) -> str:
    """What an ncu run came to: 'ok', 'cell_error', 'counters_refused', 'no_kernels' or 'failed'."""
    log = stdout + stderr
    if f"{MARK} cell-error" in stdout or code == CELL_ERROR_EXIT:
        return "cell_error"
    if COUNTERS_REFUSED in log:
        return "counters_refused"
    if report_written:
        return "ok"
    return "no_kernels" if "No kernels were profiled" in log else "failed"


def kernels_available(log: str) -> list[str]:
    """The kernels ncu lists after 'No kernels were profiled' (its 'Available Kernels:' block)."""
    _, found, rest = log.partition("Available Kernels:")
    return re.findall(r"^\s*\d+\.\s+(\S.*?)\s*$", rest, flags=re.M) if found else []


def preflight(ncu_path: str | None = None) -> str:
    """Check there is a GPU and an ncu to profile with; returns ncu's path."""
    ncu.require_gpu()
    return ncu.find_ncu(ncu_path)


def profile(
    cell: str | Path,
    *,
    kernels: str | Sequence[str] | None = None,
    sections: Sequence[str] = DEFAULT_SECTIONS,
    section_set: str | None = None,
    launch_count: int | None = 20,
    output: str | Path | None = None,
    warmup: bool = True,
    timeout: float | None = 600.0,
    ncu_path: str | None = None,
    on_progress: Callable[[ncu.Progress], None] | None = None,
) -> Result:
    """Profile the kernels of a cell (source text, or a path to a ``.py`` file) under Nsight Compute.

    ``kernels``: a regex or a list of kernel names; by default the Triton and CUDA kernels
    defined in the cell. ``sections`` / ``section_set``: what ncu collects (default: the
    targeted set of :mod:`kernel_lab.profiling.sections`). ``output``: where the report is
    written (a temporary folder by default). The cell runs in a fresh process, warmed up first.
    """
    exe = preflight(ncu_path)
    workdir = Path(tempfile.mkdtemp(prefix="kernel_lab_"))
    cell_path = _cell_file(cell)
    if cell_path is not None:
        source = cell_path.read_text()
    else:
        source, cell_path = str(cell), workdir / "cell.py"
        cell_path.write_text(source)
    output = Path(output) if output else workdir / "profile.ncu-rep"
    if output.suffix != ".ncu-rep":  # ncu always appends .ncu-rep
        output = output.with_name(output.name + ".ncu-rep")
    output.parent.mkdir(parents=True, exist_ok=True)
    regex = _kernel_regex(kernels, source)
    cmd = ncu.build_command(
        exe, cell_path, output.with_suffix(""), kernel_regex=regex, sections=sections,
        section_set=section_set, launch_count=launch_count, warmup=warmup,
    )
    env = _environment()
    try:
        code, out, err = ncu.run(cmd, on_progress, env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise ProfilingError(
            f"Profiling did not finish within {timeout:.0f} s and was stopped (a hanging kernel, or too many launches).",
            fix="Check the kernel terminates on small inputs, narrow the filter (--kernels) or lower --launch-count.",
        ) from None
    outcome = classify(code, out, err, output.exists())
    if outcome == "cell_error":
        raise _cell_error(err)
    if outcome == "counters_refused":
        names = set(ncu.kernel_names(source)) or None
        degraded = _trace_profile(cell_path, env, timeout, names)
        return analyze(replace(degraded, notes=(ENABLE_COUNTERS, *degraded.notes)))
    if outcome == "no_kernels":
        seen = kernels_available(out + err) or list(dict.fromkeys(k.name for k in _trace_profile(cell_path, env, timeout, None).kernels))
        raise NoKernelMatchedError(
            f"No kernel matched the filter {regex!r}. Kernels that ran: {', '.join(seen) or 'none'}.",
            seen,
            fix="Pass --kernels NAME_OR_REGEX (or --all-kernels) to pick the ones to profile.",
        )
    if outcome == "failed":
        raise ProfilingError(f"ncu exited with code {code} and wrote no report.", (out + err)[-4000:], fix="See ncu's output above.")
    collector = f"ncu {ncu.ncu_version(exe) or '(unknown version)'} command line"
    return analyze(report.load(output, collector=collector, replay=False))


def optimize(cell: str | Path, **options) -> OptimizeResult:
    """Take a cell (source text or a ``.py`` path) to a faster, verified version; every version is kept.

    Options as :func:`kernel_lab.optimizing.optimize` (rounds, rewriter='search'|'llm', candidates,
    root, replay, time_budget, seeds, rtol, atol, model, base_url, api_key, on_event).
    """
    from kernel_lab.optimizing import optimize as run_loop

    path = _cell_file(cell)
    if path is not None:
        options.setdefault("name", path.stem)
        cell = path.read_text()
    return run_loop(cell, **options)
