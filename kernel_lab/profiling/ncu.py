"""Drive the Nsight Compute command line: find it, build the exact command, run it with progress.

Nothing here runs at import time; ``ncu`` is looked for only when a profile is asked for.
"""
from __future__ import annotations

import codecs
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from glob import glob
from pathlib import Path

from kernel_lab.errors import NcuNotFoundError, NoGpuError
from kernel_lab.profiling.sections import DEFAULT_SECTIONS, EXTRA_METRICS, NVTX_INCLUDE

_COMMON_PLACES = ("/usr/local/cuda/bin/ncu", "/usr/local/cuda-*/bin/ncu", "/opt/nvidia/nsight-compute/*/ncu")
_TRITON_KERNEL = re.compile(r"@triton\.(?:jit|autotune|heuristics)[^\n]*\n(?:\s*@[^\n]*\n|[^\n]*\)\s*\n)*?\s*def\s+(\w+)")
_CUDA_KERNEL = re.compile(r"__global__\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?(?:static\s+)?(?:inline\s+)?void\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?(\w+)")


def find_ncu(explicit: str | None = None) -> str:
    """Path of the ncu executable: ``explicit`` > $KERNEL_LAB_NCU > PATH > usual install places."""
    for candidate in (explicit, os.environ.get("KERNEL_LAB_NCU")):
        if candidate:
            found = shutil.which(candidate)
            if found:
                return found
            raise NcuNotFoundError(f"ncu not found at {candidate}.", fix="Point KERNEL_LAB_NCU (or ncu_path) at the ncu executable.")
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


def require_gpu() -> None:
    """Raise :class:`NoGpuError` unless an NVIDIA GPU is visible."""
    if any(Path("/dev").glob("nvidia[0-9]*")):
        return
    smi = shutil.which("nvidia-smi")
    if smi and subprocess.run([smi, "-L"], capture_output=True, text=True).stdout.startswith("GPU"):
        return
    raise NoGpuError(
        "No NVIDIA GPU is visible on this machine, so nothing can be profiled here.",
        fix="Run on a machine with an NVIDIA GPU, or replay a recorded report: %%profile --replay REPORT.ncu-rep (kernel-lab diagnose REPORT).",
    )


def ncu_version(ncu: str) -> str:
    """'2025.3.1.0' from ``ncu --version`` (empty if it cannot be read)."""
    out = subprocess.run([ncu, "--version"], capture_output=True, text=True).stdout
    match = re.search(r"Version\s+([\d.]+)", out)
    return match.group(1) if match else ""


def kernel_names(source: str) -> list[str]:
    """Names of the Triton (``@triton.jit``) and CUDA (``__global__``) kernels defined in ``source``."""
    names = _TRITON_KERNEL.findall(source) + _CUDA_KERNEL.findall(source)
    return list(dict.fromkeys(names))


def kernel_filter(names: Sequence[str]) -> str:
    """An ncu ``-k`` value matching exactly these function names (templates included)."""
    return "regex:^(" + "|".join(re.escape(n) for n in names) + ")(<.*)?$"


def build_command(
    ncu: str,
    cell: Path,
    output: Path,
    *,
    kernel_regex: str | None = None,
    sections: Iterable[str] = DEFAULT_SECTIONS,
    section_set: str | None = None,
    metrics: Iterable[str] = EXTRA_METRICS,
    launch_count: int | None = 20,
    warmup: bool = True,
    python: str = sys.executable,
) -> list[str]:
    """The exact ncu argv that profiles ``cell`` through :mod:`kernel_lab.profiling.runner`."""
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
    cmd += ["-f", "-o", str(output), python, "-m", "kernel_lab.profiling.runner", str(cell)]
    if not warmup:
        cmd.append("--no-warmup")
    return cmd


@dataclass(frozen=True)
class Progress:
    """A progress event parsed from ncu's console output."""

    kernel: str  # kernel being profiled
    number: int  # 1-based count of profiled launches so far
    percent: int  # replay progress of this launch, 0..100
    passes: int | None = None  # set when the launch is done


_PROF = re.compile(r'==PROF== Profiling "(?P<name>[^"]+)"[^:]*:\s?(?P<progress>[0-9.%]*)(?:\s*-\s*(?P<passes>\d+) passes)?')


class ProgressParser:
    """Turns ncu's console output into :class:`Progress` events.

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


def run(
    cmd: Sequence[str],
    on_progress: Callable[[Progress], None] | None = None,
    env: dict | None = None,
    timeout: float | None = None,
) -> tuple[int, str, str]:
    """Run a command (ncu), reporting progress as it goes. Returns (exit code, stdout, stderr).

    Raises :class:`subprocess.TimeoutExpired` after killing the whole process group when it
    runs longer than ``timeout`` seconds.
    """
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, start_new_session=True)
    parser, lock = ProgressParser(), threading.Lock()
    chunks: dict[str, list[str]] = {"out": [], "err": []}

    def pump(stream, key: str) -> None:
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        while data := stream.read1(4096):
            text = decoder.decode(data)
            chunks[key].append(text)
            with lock:
                events = parser.feed(text)
            for event in events:
                if on_progress:
                    on_progress(event)

    threads = [threading.Thread(target=pump, args=(proc.stdout, "out")), threading.Thread(target=pump, args=(proc.stderr, "err"))]
    for t in threads:
        t.start()
    try:
        code = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        raise
    finally:
        for t in threads:
            t.join()
    return code, "".join(chunks["out"]), "".join(chunks["err"])
