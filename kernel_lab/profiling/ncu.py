"""The Nsight Compute backend: find ``ncu``, build the exact command, run the cell under it in a fresh
process with live progress, and say what went wrong in one line when it does.

Nothing here runs at import time; ``ncu`` is looked for only when a profile is asked for.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from glob import glob
from pathlib import Path

from kernel_lab import processes
from kernel_lab.cells import CellSource, kernel_names
from kernel_lab.errors import (
    CountersNotPermittedError,
    NcuNotFoundError,
    NoGpuError,
    NoKernelMatchedError,
    ProfilingError,
)
from kernel_lab.models import Profile
from kernel_lab.profiling import report
from kernel_lab.profiling.base import OnProgress, Progress
from kernel_lab.profiling.launches import record_path
from kernel_lab.profiling.runner import CELL_ERROR_EXIT, MARK, cell_error, profiling_env
from kernel_lab.profiling.sections import DEFAULT_SECTIONS, EXTRA_METRICS, NVTX_INCLUDE
from kernel_lab.settings import Settings

_COMMON_PLACES = ("/usr/local/cuda/bin/ncu", "/usr/local/cuda-*/bin/ncu", "/opt/nvidia/nsight-compute/*/ncu")
COUNTERS_REFUSED = "ERR_NVGPUCTRPERM"
ENABLE_COUNTERS = (
    "GPU performance counters are not permitted for this user (ncu: ERR_NVGPUCTRPERM). To enable them, run as root"
    " or set the driver option NVreg_RestrictProfilingToAdminUsers=0 (see"
    " https://developer.nvidia.com/ERR_NVGPUCTRPERM); in a container, start it with --cap-add=SYS_ADMIN."
)


def find_ncu(explicit: str | None = None) -> str:
    """Path of the ncu executable: ``explicit`` (the setting, or $KERNEL_LAB_NCU) > PATH > usual install places."""
    if explicit:
        found = shutil.which(explicit)
        if found:
            return found
        raise NcuNotFoundError(
            f"ncu not found at {explicit}.", fix="Point KERNEL_LAB_NCU (or the ncu_path setting) at the ncu executable."
        )
    found = shutil.which("ncu")
    if found:
        return found
    for pattern in _COMMON_PLACES:
        hits = sorted(glob(pattern))
        if hits:
            return hits[-1]
    raise NcuNotFoundError(
        "Nsight Compute (ncu) is not installed or not on PATH.",
        fix="Install Nsight Compute (it ships with the CUDA toolkit) or set KERNEL_LAB_NCU; or replay a recorded report with --replay REPORT.",
    )


def has_gpu() -> bool:
    """Whether an NVIDIA GPU is visible (device files, else ``nvidia-smi -L``)."""
    if any(Path("/dev").glob("nvidia[0-9]*")):
        return True
    smi = shutil.which("nvidia-smi")
    return smi is not None and subprocess.run([smi, "-L"], capture_output=True, text=True, check=False).stdout.startswith("GPU")


def require_gpu() -> None:
    """Raise :class:`NoGpuError` unless an NVIDIA GPU is visible."""
    if not has_gpu():
        raise NoGpuError(
            "No NVIDIA GPU is visible on this machine, so nothing can be profiled here.",
            fix="Run on a machine with an NVIDIA GPU, or replay a recorded report: %%profile --replay REPORT.ncu-rep (kernel-lab diagnose REPORT).",
        )


def preflight(ncu_path: str | None = None) -> str:
    """Check there is a GPU and an ncu to profile with; returns ncu's path."""
    require_gpu()
    return find_ncu(ncu_path)


def ncu_version(ncu: str) -> str:
    """'2025.3.1.0' from ``ncu --version`` (empty if it cannot be read)."""
    out = subprocess.run([ncu, "--version"], capture_output=True, text=True, check=False).stdout
    match = re.search(r"Version\s+([\d.]+)", out)
    return match.group(1) if match else ""


def kernel_filter(names: Sequence[str]) -> str:
    """An ncu ``-k`` value matching exactly these function names (templates included)."""
    return "regex:^(" + "|".join(re.escape(n) for n in names) + ")(<.*)?$"


def kernel_regex(kernels: str | None, source: str) -> str | None:
    """The ``-k`` value: ``kernels`` as a regex, else the kernels the cell defines, else none (every kernel)."""
    if kernels is None:
        names = kernel_names(source)
        return kernel_filter(names) if names else None
    return kernels if kernels.startswith("regex:") else f"regex:{kernels}"


def build_command(
    ncu: str,
    cell: Path | None,
    output: Path,
    *,
    kernel_regex: str | None = None,
    sections: Iterable[str] = DEFAULT_SECTIONS,
    section_set: str | None = None,
    metrics: Iterable[str] = EXTRA_METRICS,
    launch_count: int | None = 20,
    warmup: bool = True,
    python: str = sys.executable,
    wait_for: Path | None = None,
    record: Path | None = None,
) -> list[str]:
    """The exact ncu argv that profiles ``cell`` through :mod:`kernel_lab.profiling.runner` (``cell`` None and
    ``wait_for`` a file: a process started ahead, whose cell's path that file will hold; ``record``: where the
    runner writes what the profiled run launched)."""
    cmd = [ncu, "--clock-control", "none", "--import-source", "yes", "--nvtx", "--nvtx-include", NVTX_INCLUDE]
    if kernel_regex:
        cmd += ["-k", kernel_regex]
    if launch_count:
        cmd += ["-c", str(launch_count)]
    if section_set:
        cmd += ["--set", section_set]
    else:
        for section in sections:
            cmd += ["--section", section]
    metrics = list(metrics)
    if metrics:
        cmd += ["--metrics", ",".join(metrics)]
    cmd += ["-f", "-o", str(output), python, "-m", "kernel_lab.profiling.runner"]
    cmd += [str(cell)] if wait_for is None else ["--wait-for", str(wait_for), "--owner", str(os.getpid())]
    if not warmup:
        cmd.append("--no-warmup")
    if record is not None:
        cmd += ["--record", str(record)]
    return cmd


_PROF = re.compile(r'==PROF== Profiling "(?P<name>[^"]+)"[^:]*:\s?(?P<progress>[0-9.%]*)(?:\s*-\s*(?P<passes>\d+) passes)?')


class ProgressParser:
    """Turns ncu's console output into :class:`~kernel_lab.profiling.Progress` events.

    ncu prints ``==PROF== Profiling "k": 0%....50%....100% - 10 passes`` one dot at a time,
    without a newline until the launch is done, so text is fed as it arrives.
    """

    def __init__(self) -> None:
        self._line = ""
        self._done = 0
        self._last: Progress | None = None

    def feed(self, text: str) -> list[Progress]:
        events = []
        for piece in re.split(r"(\n)", text):
            if piece == "\n":
                if self._last is not None and self._last.passes is not None:
                    self._done += 1
                self._line, self._last = "", None
                continue
            self._line += piece
            event = self._current()
            if event is not None and event != self._last:
                events.append(event)
                self._last = event
        return events

    def _current(self) -> Progress | None:
        match = _PROF.search(self._line)
        if not match:
            return None
        percent = 0
        for token in re.findall(r"\d+%|\.", match.group("progress")):
            percent = int(token[:-1]) if token.endswith("%") else percent + 10
        passes = match.group("passes")
        return Progress(match.group("name"), self._done + 1, min(percent, 100), int(passes) if passes else None)


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


def report_path(output: Path | None, workdir: Path) -> Path:
    """Where the report goes; ncu always appends ``.ncu-rep``, so the path ends in it."""
    output = Path(output) if output else workdir / "profile.ncu-rep"
    if output.suffix != ".ncu-rep":
        output = output.with_name(output.name + ".ncu-rep")
    output.parent.mkdir(parents=True, exist_ok=True)
    return output


@dataclass
class _Ahead:
    """A process under ncu started before its cell is known (see :class:`NcuProfiler`)."""

    running: processes.Running
    options: tuple  # what its command was built with, less the cell: a cell needing other options cannot use it
    output: Path  # where ncu writes its report
    request: Path  # the file that will hold the cell's path (written whole, by a rename)

    def give(self, cell: Path) -> bool:
        """Hand the process its cell; False when it has already ended."""
        if self.running.proc.poll() is not None:
            return False
        part = self.request.with_suffix(".part")
        part.write_text(str(cell.resolve()))
        part.rename(self.request)
        return True


class NcuProfiler:
    """The cell in a fresh process under Nsight Compute: warm-up outside, one profiled run inside an NVTX range.

    ``ahead=True`` (the optimize loop, which profiles version after version): after each profile the next
    process is started at once, under ncu, with Python, torch and a CUDA context loaded, and waits for its
    cell's path in a file. Each version still runs in a fresh process with its own report; only the start-up
    (about 8 s on the H100) leaves the critical path. :meth:`close` ends the waiting process.
    """

    name = "ncu"
    profiles_cells = True

    def __init__(self, ahead: bool = False) -> None:
        self.ahead = ahead
        self._next: _Ahead | None = None

    def close(self) -> None:
        """Stop the process started ahead, if any."""
        if self._next is not None:
            self._next.running.kill(wait=False)
            self._next = None

    def start_ahead(self, cell: CellSource, settings: Settings) -> None:
        """Start the process for the next profile now (for a caller whose first profile was taken elsewhere)."""
        if self.ahead and self._next is None:
            self._next = self._start(self._options(cell, settings))

    @staticmethod
    def _options(cell: CellSource, settings: Settings) -> tuple:
        """What an ncu command for ``cell`` is built from, less the cell's file and the report's."""
        exe = preflight(settings.ncu_path)
        regex = kernel_regex(settings.kernel_filter, cell.text)
        sections = tuple(settings.sections or DEFAULT_SECTIONS)
        where = (os.getcwd(), tuple(sorted(profiling_env().items())))  # a process started elsewhere, or before a change
        return (exe, regex, sections, settings.section_set, settings.launch_count, settings.warmup, where)

    def collect(
        self, cell: CellSource, settings: Settings, on_progress: OnProgress | None = None, output: Path | None = None
    ) -> Profile:
        """Profile the kernels of ``cell``; raises a one-line :class:`~kernel_lab.errors.KernelLabError` on failure."""
        options = self._options(cell, settings)
        exe, regex = options[0], options[1]
        workdir = Path(tempfile.mkdtemp(prefix="kernel_lab_"))
        path = cell.path or workdir / "cell.py"
        if cell.path is None:
            path.write_text(cell.text)
        output = report_path(output, workdir)
        parser = ProgressParser()

        def on_output(text: str) -> None:
            for event in parser.feed(text):
                if on_progress is not None:
                    on_progress(event)

        ahead, self._next = self._next, None
        if ahead is not None and ahead.options == options and ahead.give(path):
            done = ahead.running.finish(settings.timeout, on_output)
            for made, wanted in ((ahead.output, output), (record_path(ahead.output), record_path(output))):
                if made.exists():
                    shutil.move(made, wanted)
        else:
            if ahead is not None:  # started for other options (or ended): not waited for, it holds a CUDA context
                ahead.running.kill(wait=False)
            done = processes.run(
                self._command(options, path, output), env=profiling_env(), timeout=settings.timeout, on_output=on_output
            )
        if self.ahead:
            self._next = self._start(options)
        if done.code is None:
            raise ProfilingError(
                f"Profiling did not finish within {settings.timeout:.0f} s and was stopped (a hanging kernel, or too many launches).",
                fix="Check the kernel terminates on small inputs, narrow the filter (--kernels) or lower --launch-count.",
            )
        outcome = classify(done.code, done.stdout, done.stderr, output.exists())
        if outcome == "cell_error":
            raise cell_error(done.stderr)
        if outcome == "counters_refused":
            raise CountersNotPermittedError(ENABLE_COUNTERS)
        if outcome == "no_kernels":
            raise self._no_kernels(cell, path, settings, regex, done.stdout + done.stderr)
        if outcome == "failed":
            raise ProfilingError(
                f"ncu exited with code {done.code} and wrote no report.",
                (done.stdout + done.stderr)[-4000:],
                fix="See ncu's output above.",
            )
        return report.load(output, collector=f"ncu {ncu_version(exe) or '(unknown version)'} command line", replay=False)

    def _start(self, options: tuple) -> _Ahead:
        """A process under ncu, started now, that waits for its cell."""
        folder = Path(tempfile.mkdtemp(prefix="kernel_lab_"))
        output, request = report_path(None, folder), folder / "cell-path"
        command = self._command(options, None, output, wait_for=request)
        return _Ahead(processes.Running(command, env=profiling_env()), options, output, request)

    @staticmethod
    def _command(options: tuple, cell: Path | None, output: Path, wait_for: Path | None = None) -> list[str]:
        exe, regex, sections, section_set, launch_count, warmup, _ = options
        return build_command(
            exe,
            cell,
            output.with_suffix(""),
            wait_for=wait_for,
            record=record_path(output),
            kernel_regex=regex,
            sections=sections,
            section_set=section_set,
            launch_count=launch_count,
            warmup=warmup,
        )

    @staticmethod
    def _no_kernels(cell: CellSource, path: Path, settings: Settings, regex: str | None, log: str) -> NoKernelMatchedError:
        """The error listing the kernels that did run (from ncu's log, else from a trace of the cell)."""
        from kernel_lab.profiling.trace import TraceProfiler

        seen = kernels_available(log) or list(
            dict.fromkeys(
                k.name for k in TraceProfiler(only_cell_kernels=False).collect(CellSource(cell.text, path), settings).kernels
            )
        )
        return NoKernelMatchedError(
            f"No kernel matched the filter {regex!r}. Kernels that ran: {', '.join(seen) or 'none'}.",
            seen,
            fix="Pass --kernels NAME_OR_REGEX (or --all-kernels) to pick the ones to profile.",
        )
