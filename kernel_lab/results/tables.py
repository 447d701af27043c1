"""pandas views of a profile: the tidy metric table and the per-kernel summary."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kernel_lab import metrics as M
from kernel_lab.analysis.roofline import roofline
from kernel_lab.models import Diagnosis, Kernel, Profile

if TYPE_CHECKING:
    import pandas as pd

#: Columns of :func:`summary_frame`, with their meaning (also shown in the README).
SUMMARY_COLUMNS: dict[str, str] = {
    "kernel": "kernel function name",
    "launch": "position of the launch in the report (0-based)",
    "duration_us": "kernel duration on the GPU, microseconds (gpu__time_duration.sum)",
    "roof": "the roof that bounds the kernel on the roofline: DRAM, or a compute ceiling (FP32, Tensor BF16/FP16, ...)",
    "roof_pct": "% of that roof reached: DRAM bytes moved against DRAM's peak, or FLOPs executed against the ceiling",
    "sm_pct": "SM throughput, % of peak (sm__throughput)",
    "memory_pct": "memory throughput, % of peak, busiest of DRAM/L2/L1 (gpu__compute_memory_throughput)",
    "dram_pct": "DRAM throughput, % of peak (gpu__dram_throughput)",
    "achieved_occupancy_pct": "average active warps, % of the SM's maximum (sm__warps_active)",
    "theoretical_occupancy_pct": "warps that could be resident, % of maximum (sm__maximum_warps_per_active_cycle_pct)",
    "occupancy_limiter": "resource that caps resident blocks: registers, shared_memory, warps or block_size",
    "registers_per_thread": "registers allocated per thread (launch__registers_per_thread)",
    "shared_mem_per_block": "shared memory per block in bytes, incl. 1 KB driver reserve (launch__shared_mem_per_block)",
    "grid_size": "blocks in the grid (launch__grid_size)",
    "block_size": "threads per block (launch__block_size)",
    "waves": "waves of blocks per SM (launch__waves_per_multiprocessor)",
    "dram_bytes": "bytes read from and written to DRAM (dram__bytes_read.sum + dram__bytes_write.sum)",
    "top_bottleneck": "the conductor's first-ranked bottleneck kind",
}
_DIRECT = {
    "sm_pct": M.SM_PCT,
    "memory_pct": M.MEM_PCT,
    "dram_pct": M.DRAM_PCT,
    "achieved_occupancy_pct": M.ACHIEVED_OCC,
    "theoretical_occupancy_pct": M.THEORETICAL_OCC,
    "registers_per_thread": M.REGISTERS,
    "shared_mem_per_block": M.SHARED_PER_BLOCK,
    "grid_size": M.GRID,
    "block_size": M.BLOCK,
    "waves": M.WAVES,
}


def occupancy_limiter(kernel: Kernel) -> str | None:
    """The resource that caps resident blocks per SM, or None when nothing does (100% theoretical occupancy)."""
    if (kernel.get(M.THEORETICAL_OCC) or 0) >= 100:
        return None
    limits = {name: kernel.value(m) for name, m in M.OCCUPANCY_LIMITS.items() if kernel.has(m)}
    return min(limits, key=lambda name: limits[name]) if limits else None


def summary_row(kernel: Kernel, diagnosis: Diagnosis | None = None) -> dict:
    """One kernel's summary as a dict keyed by :data:`SUMMARY_COLUMNS` (None where not collected)."""
    duration = kernel.get(M.DURATION)
    dram = None
    if kernel.has(M.DRAM_READ, M.DRAM_WRITE):
        dram = kernel.value(M.DRAM_READ) + kernel.value(M.DRAM_WRITE)
    reached = roofline(kernel).reached()
    row = {
        "kernel": kernel.name,
        "launch": kernel.index,
        "duration_us": None if duration is None else duration / 1000,
        "roof": reached[1] if reached else None,
        "roof_pct": 100 * reached[0] if reached else None,
        **{col: kernel.get(metric) for col, metric in _DIRECT.items()},
        "occupancy_limiter": occupancy_limiter(kernel),
        "dram_bytes": dram,
        "top_bottleneck": diagnosis.bottlenecks[0].kind if diagnosis and diagnosis.bottlenecks else None,
    }
    return {col: row[col] for col in SUMMARY_COLUMNS}


def summary_frame(profile: Profile, diagnoses: list[Diagnosis] | None = None) -> pd.DataFrame:
    """One row per kernel launch; columns as in :data:`SUMMARY_COLUMNS`."""
    import pandas as pd

    by_index = {d.kernel.index: d for d in diagnoses or []}
    rows = [summary_row(k, by_index.get(k.index)) for k in profile.kernels]
    return pd.DataFrame(rows, columns=list(SUMMARY_COLUMNS))


def metrics_frame(profile: Profile) -> pd.DataFrame:
    """Tidy table of every numeric metric: columns ``launch, kernel, section, metric, value, unit, instances``.

    One row per (launch, metric); ``metric`` is the Nsight Compute name, ``value`` a float,
    ``unit`` as ncu reports it ('' where unitless), ``section`` the id of the Nsight Compute
    section that shows the metric ('' for metrics collected but shown by no section). An array metric
    (one value per SASS PC, opcode, block size, ...) has its values in ``instances`` (None for the others)
    and in ``value`` the sum Nsight Compute gives for it, which means nothing for a percentage.
    """
    import pandas as pd

    rows = [
        (k.index, k.name, k.sections.get(name, ""), name, value, k.units.get(name, ""), k.arrays.get(name))
        for k in profile.kernels
        for name, value in k.metrics.items()
    ]
    return pd.DataFrame(rows, columns=["launch", "kernel", "section", "metric", "value", "unit", "instances"])
