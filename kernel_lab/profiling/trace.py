"""Read a torch.profiler chrome trace into a :class:`~kernel_lab.models.Profile`.

This is what can be had without hardware counters (when ncu is refused access to them):
kernel names, durations and launch configuration, plus theoretical occupancy from the
occupancy calculator. Metrics are stored under the Nsight Compute names of the same
quantities so the conductor's launch-configuration rules run unchanged.
"""

from __future__ import annotations

import gzip
import json
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path

from kernel_lab import hardware, processes
from kernel_lab import metrics as M
from kernel_lab.cells import CellSource, kernel_names
from kernel_lab.errors import ProfilingError, ReportError
from kernel_lab.models import Kernel, Profile
from kernel_lab.profiling import launches
from kernel_lab.profiling.base import OnProgress
from kernel_lab.profiling.runner import CELL_ERROR_EXIT, cell_error, profiling_env
from kernel_lab.settings import Settings


def _open(path: Path):
    return gzip.open(path, "rt") if path.suffix == ".gz" else path.open()


def _device(trace: dict, architectures: Mapping[tuple[int, int], hardware.Architecture]) -> hardware.Gpu:
    """The GPU of the trace's ``deviceProperties`` (what torch records), completed from the tables."""
    props = (trace.get("deviceProperties") or [{}])[0]
    major, minor = props.get("computeMajor"), props.get("computeMinor")
    cc = (int(major), int(minor)) if major is not None and minor is not None else None
    limits = {"registers_per_sm": props.get("regsPerMultiprocessor"), "shared_per_sm": props.get("sharedMemPerMultiprocessor")}
    if props.get("maxThreadsPerMultiprocessor"):
        limits["max_warps_per_sm"] = props["maxThreadsPerMultiprocessor"] // 32
    return hardware.gpu(
        props.get("name", "unknown GPU"), cc, props.get("numSms"), {k: v for k, v in limits.items() if v}, architectures
    )


def base_name(demangled: str) -> str:
    """'void ns::k<4>(float const*, int)' -> 'ns::k<4>': the function name as ncu's -k matches it."""
    name = demangled.split("(", 1)[0].strip()
    return name.removeprefix("void ").strip()


def kernel_from_event(index: int, event: dict, gpu: hardware.Gpu) -> Kernel:
    args = event.get("args", {})
    grid, block = args.get("grid", [1, 1, 1]), args.get("block", [1, 1, 1])
    threads = block[0] * block[1] * block[2]
    regs = int(args.get("registers per thread", 0))
    shared = int(args.get("shared memory", 0))
    metrics = {
        M.DURATION: float(event.get("dur", 0)) * 1000.0,
        M.GRID: float(grid[0] * grid[1] * grid[2]),
        M.BLOCK: float(threads),
        M.REGISTERS: float(regs),
        M.SHARED_PER_BLOCK: float(shared + (gpu.arch.shared_reserved_per_block if gpu.arch else 0)),
    }
    if gpu.sms:
        metrics[M.SM_COUNT] = float(gpu.sms)
    if gpu.arch is not None:
        occ = hardware.occupancy(gpu.arch, threads, regs, shared)
        metrics[M.THEORETICAL_OCC] = occ.theoretical_pct
        metrics.update({M.OCCUPANCY_LIMITS[name]: float(v) for name, v in occ.limits.items()})
        if occ.blocks_per_sm and gpu.sms:
            metrics[M.WAVES] = metrics[M.GRID] / (occ.blocks_per_sm * gpu.sms)
    full = event.get("name", "?")
    return Kernel(
        index=index,
        name=base_name(full),
        demangled=full,
        metrics=metrics,
        attributes={"device__attribute_display_name": gpu.name},
    )


def load(
    path: str | Path,
    *,
    only: set[str] | None = None,
    collector: str = "torch.profiler trace",
    architectures: Mapping[tuple[int, int], hardware.Architecture] = hardware.ARCHITECTURES,
) -> Profile:
    """Kernels of a chrome trace written by torch.profiler; ``only`` keeps these kernel names.

    ``architectures`` is the table of per-SM limits used for the occupancy calculator.
    """
    path = Path(path)
    try:
        with _open(path) as fh:
            trace = json.load(fh)
    except (OSError, ValueError) as exc:
        raise ReportError(f"Cannot read the trace {path}: {exc}.", fix="Record it again.") from exc
    if not isinstance(trace, dict) or "traceEvents" not in trace:
        raise ReportError(
            f"{path} is not a torch.profiler trace (it has no traceEvents).",
            fix="Give a trace written by torch.profiler's export_chrome_trace, or a .ncu-rep report.",
        )
    gpu = _device(trace, architectures)
    events = [e for e in trace["traceEvents"] if e.get("cat") == "kernel"]
    events = [e for e in events if only is None or base_name(e.get("name", "")) in only]
    kernels = tuple(kernel_from_event(i, e, gpu) for i, e in enumerate(events))
    notes = [
        "Hardware counters were not available: throughput, memory and stall metrics are missing; durations and "
        "launch configuration come from a torch.profiler trace and occupancy from the occupancy calculator."
    ]
    if gpu.arch is None:
        cc = ".".join(map(str, gpu.compute_capability)) if gpu.compute_capability else "unknown"
        notes.append(
            f"{gpu.name} (compute capability {cc}) is not in Kernel Lab's hardware table: theoretical"
            " occupancy and waves are not computed."
        )
    record = launches.load(launches.record_path(path))  # what the traced run launched, when it was recorded
    return Profile(kernels=kernels, origin=str(path), collector=collector, notes=tuple(notes), record=record)


class TraceProfiler:
    """The cell in a fresh process under torch.profiler: durations and launch configuration, no counters."""

    name = "torch.profiler trace"
    profiles_cells = True

    def __init__(self, only_cell_kernels: bool = True) -> None:
        self.only_cell_kernels = only_cell_kernels  # keep the kernels the cell defines (else every kernel)

    def collect(
        self, cell: CellSource, settings: Settings, on_progress: OnProgress | None = None, output: Path | None = None
    ) -> Profile:
        workdir = Path(tempfile.mkdtemp(prefix="kernel_lab_"))
        path = cell.path or workdir / "cell.py"
        if cell.path is None:
            path.write_text(cell.text)
        out = Path(output).with_suffix(".trace.json") if output else workdir / "profile.trace.json"
        record = launches.record_path(out)  # read back by load(): the whole-cell reading, with gaps measured
        cmd = [sys.executable, "-m", "kernel_lab.profiling.runner", str(path), "--trace", str(out), "--record", str(record)]
        if not settings.warmup:
            cmd.append("--no-warmup")
        done = processes.run(cmd, env=profiling_env(), timeout=settings.timeout)
        if done.code == CELL_ERROR_EXIT:
            raise cell_error(done.stderr)
        if done.code != 0 or not out.exists():
            reason = "did not finish in time" if done.code is None else f"failed (exit status {done.code})"
            raise ProfilingError(
                f"Recording a torch.profiler trace of the cell {reason}.", done.stderr[-2000:], fix="See the log above."
            )
        names = set(kernel_names(cell.text)) if self.only_cell_kernels else set()
        return load(out, only=names or None)
