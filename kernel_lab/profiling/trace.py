"""Read a torch.profiler chrome trace into a :class:`~kernel_lab.models.Profile`.

This is what can be had without hardware counters (when ncu is refused access to them):
kernel names, durations and launch configuration, plus theoretical occupancy from the
occupancy calculator. Metrics are stored under the Nsight Compute names of the same
quantities so the conductor's launch-configuration rules run unchanged.
"""
from __future__ import annotations

import gzip
import json
from pathlib import Path

from kernel_lab import hardware
from kernel_lab.analysis import metrics as M
from kernel_lab.errors import ReportError
from kernel_lab.models import Kernel, Profile


def _open(path: Path):
    return gzip.open(path, "rt") if path.suffix == ".gz" else path.open()


def _device(trace: dict, gpus: tuple) -> tuple[str, hardware.Gpu | None, int | None]:
    props = (trace.get("deviceProperties") or [{}])[0]
    name = props.get("name", "unknown GPU")
    return name, hardware.lookup(name, gpus), props.get("numSms")


def base_name(demangled: str) -> str:
    """'void ns::k<4>(float const*, int)' -> 'ns::k<4>': the function name as ncu's -k matches it."""
    name = demangled.split("(", 1)[0].strip()
    return name.removeprefix("void ").strip()


def kernel_from_event(index: int, event: dict, device: str, gpu: hardware.Gpu | None, sms: int | None) -> Kernel:
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
        M.SHARED_PER_BLOCK: float(shared + (gpu.shared_reserved_per_block if gpu else 0)),
    }
    sms = sms or (gpu.sms if gpu else None)
    if sms:
        metrics[M.SM_COUNT] = float(sms)
    if gpu is not None:
        occ = hardware.occupancy(gpu, threads, regs, shared)
        metrics[M.THEORETICAL_OCC] = occ.theoretical_pct
        metrics.update({M.OCCUPANCY_LIMITS[name]: float(v) for name, v in occ.limits.items()})
        if occ.blocks_per_sm and sms:
            metrics[M.WAVES] = metrics[M.GRID] / (occ.blocks_per_sm * sms)
    full = event.get("name", "?")
    return Kernel(
        index=index,
        name=base_name(full),
        demangled=full,
        metrics=metrics,
        attributes={"device__attribute_display_name": device},
    )


def load(
    path: str | Path,
    *,
    only: set[str] | None = None,
    collector: str = "torch.profiler trace",
    gpus: tuple[tuple[str, hardware.Gpu], ...] = hardware.GPUS,
) -> Profile:
    """Kernels of a chrome trace written by torch.profiler; ``only`` keeps these kernel names.

    ``gpus`` is the hardware table used for the occupancy calculator.
    """
    path = Path(path)
    try:
        with _open(path) as fh:
            trace = json.load(fh)
    except (OSError, ValueError) as exc:
        raise ReportError(f"Cannot read the trace {path}: {exc}.", fix="Record it again.") from exc
    device, gpu, sms = _device(trace, gpus)
    events = [e for e in trace.get("traceEvents", []) if e.get("cat") == "kernel"]
    events = [e for e in events if only is None or base_name(e.get("name", "")) in only]
    kernels = tuple(kernel_from_event(i, e, device, gpu, sms) for i, e in enumerate(events))
    notes = [
        "Hardware counters were not available: throughput, memory and stall metrics are missing; durations and "
        "launch configuration come from a torch.profiler trace and occupancy from the occupancy calculator."
    ]
    if gpu is None:
        notes.append(f"{device} is not in Kernel Lab's hardware table: theoretical occupancy and waves are not computed.")
    return Profile(kernels=kernels, origin=str(path), collector=collector, notes=tuple(notes))

