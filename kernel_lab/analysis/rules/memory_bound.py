"""memory_bound: the memory system, not the SMs, sets the pace (Nsight Compute's SOL test).

Score: the time a typical remedy (fusion, narrower types, reuse) would save: SAVES x memory throughput
(fraction of peak), SAVES calibrated on measured fixes (see below).
"""

from __future__ import annotations

from kernel_lab import metrics as M
from kernel_lab.analysis.roofline import NEAR, compute_roof
from kernel_lab.analysis.roofline import READS as ROOFLINE_READS
from kernel_lab.analysis.rules._text import nbytes, rate
from kernel_lab.models import Bottleneck, Kernel

KIND = "memory_bound"
NEEDS = ((M.SM_PCT, M.MEM_PCT),)
READS = (M.DRAM_PCT, M.L2_PCT, M.L1_PCT, M.DRAM_READ, M.DRAM_WRITE, M.DRAM_BW, *ROOFLINE_READS)
REGIME = True
NCU_TITLES = ("High Memory Throughput",)
SEARCH = (+1, +1, "bigger tiles and more warps keep more loads in flight and use wider accesses")
NEAR_ROOF_PCT = 75.0
MIN_MEMORY_PCT = 60.0  # memory throughput (% of peak) a memory-bound kernel reaches at least, above the SMs'
#: share of the memory time a typical remedy saves, calibrated on the suite's tuning pairs (one pass fewer in
#: a layernorm: 25% measured; tiling a naive SGEMM: 22%); it was 0.5 (halving the traffic) before
SAVES = 0.3


def evaluate(k: Kernel) -> Bottleneck | None:
    sm, mem = k.value(M.SM_PCT), k.value(M.MEM_PCT)
    at_roof = compute_roof(k)
    if mem < MIN_MEMORY_PCT or mem < sm or (at_roof is not None and at_roof[0] >= NEAR):  # at a compute roof: not memory's
        return None
    units = {"DRAM": k.get(M.DRAM_PCT), "L2 cache": k.get(M.L2_PCT), "L1/shared memory": k.get(M.L1_PCT)}
    measured = {u: p for u, p in units.items() if p is not None}
    unit, unit_pct = max(measured.items(), key=lambda x: x[1]) if measured else ("memory system", mem)
    dram = units["DRAM"]
    moved = (k.get(M.DRAM_READ) or 0) + (k.get(M.DRAM_WRITE) or 0)
    evidence = {M.SM_PCT: sm, M.MEM_PCT: mem}
    evidence.update({m: k.value(m) for m in (M.DRAM_PCT, M.L2_PCT, M.L1_PCT, M.DRAM_READ, M.DRAM_WRITE, M.DRAM_BW) if k.has(m)})
    if dram is not None and dram >= NEAR_ROOF_PCT:
        where = (
            f"DRAM runs at {dram:.0f}% of its peak"
            + (f" ({rate(k.value(M.DRAM_BW))}, {nbytes(moved)} moved)" if k.has(M.DRAM_BW) else "")
            + ": the kernel is already near the DRAM roofline, so tuning block sizes or warps will not"
            " make it much faster. The gain is in moving fewer bytes:"
        )
    else:
        where = (
            f"The busiest unit is the {unit} at {unit_pct:.0f}% of its peak. Check first that every byte"
            " fetched is used (coalescing, cache reuse), then move fewer bytes:"
        )
    hint = (
        f"The kernel spends its time waiting for memory: memory throughput is {mem:.0f}% of peak while"
        f" the SMs are only {sm:.0f}% busy. {where} fuse this kernel with the one that produces or"
        " consumes its data so intermediates stay in registers, use a narrower type (bf16/fp16/fp8)"
        " where accuracy allows, and reuse data through shared memory or L2 instead of re-reading it."
    )
    summary = f"Memory-bound: memory at {mem:.0f}% of peak ({unit} busiest), SMs at {sm:.0f}%"
    return Bottleneck(KIND, SAVES * mem / 100, summary, hint, evidence)
