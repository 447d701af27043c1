"""uncoalesced_global: a warp's global accesses fetch sectors it does not use (ncu's UncoalescedGlobalAccess).

Score: the share of L2 sectors that are excessive, weighted by L2 throughput (% of peak): the time the excess
costs where L2 bandwidth sets the pace, little where latency does.
Without source counters, falls back to the bytes used per 32-byte sector of global loads.
"""

from __future__ import annotations

from kernel_lab import metrics as M
from kernel_lab.analysis.rules._text import count
from kernel_lab.analysis.source import top_lines
from kernel_lab.models import Bottleneck, Kernel

KIND = "uncoalesced_global"
NEEDS = (
    (M.SECTORS_EXCESSIVE, M.SECTORS_GLOBAL, M.LTS_ACTIVE, M.LTS_ELAPSED),
    (M.BYTES_PER_SECTOR_LD, M.L2_PCT),
)
READS = (M.BYTES_PER_SECTOR_LD, M.L2_PCT, M.DRAM_PCT)
NCU_RULES = ("UncoalescedGlobalAccess",)
NCU_TITLES = (
    "L1TEX Global Load Access Pattern",
    "L2 Global Load Access Pattern",
    "DRAM Global Load Access Pattern",
    "L1TEX Global Store Access Pattern",
    "L2 Global Store Access Pattern",
)
MIN_EXCESSIVE = 0.10
ADVICE = (
    " Make consecutive threads touch consecutive addresses: in Triton the fastest-varying index of"
    " tl.arange must walk the contiguous dimension of the tensor (swap the index order or load a tile"
    " and use tl.trans); in CUDA threadIdx.x must index the contiguous dimension, and a transpose-like"
    " access should go through a shared-memory tile."
)


def evaluate(k: Kernel) -> Bottleneck | None:
    if k.has(M.SECTORS_EXCESSIVE, M.SECTORS_GLOBAL, M.LTS_ACTIVE, M.LTS_ELAPSED):
        total, excessive = k.value(M.SECTORS_GLOBAL), k.value(M.SECTORS_EXCESSIVE)
        share = excessive / total if total else 0.0
        if share < MIN_EXCESSIVE:
            return None
        # the wasted sectors cost time in proportion to how busy L2 is (a latency-bound kernel barely feels them)
        busy = k.value(M.L2_PCT) / 100 if k.has(M.L2_PCT) else k.value(M.LTS_ACTIVE) / k.value(M.LTS_ELAPSED)
        score = share * busy
        evidence = {M.SECTORS_EXCESSIVE: excessive, M.SECTORS_GLOBAL: total}
        what = (
            f"{share:.0%} of the {count(total)} 32-byte sectors the kernel fetched from L2 for global"
            " memory were not needed by the threads that asked for them"
        )
    else:
        used = k.value(M.BYTES_PER_SECTOR_LD)
        if used >= 32 * (1 - MIN_EXCESSIVE) or used <= 0:
            return None
        share = 1 - used / 32
        score = share * k.value(M.L2_PCT) / 100
        evidence = {M.BYTES_PER_SECTOR_LD: used}
        what = f"global loads use only {used:.1f} of the 32 bytes of every sector they fetch"
    for m in (M.BYTES_PER_SECTOR_LD, M.L2_PCT, M.DRAM_PCT):
        if k.has(m):
            evidence[m] = k.value(m)
    hint = (
        f"Uncoalesced global memory access: {what}. Memory moves in 32-byte sectors; when the 32 threads"
        " of a warp read addresses far apart, each thread's 4 bytes cost a whole sector, so the kernel"
        " moves several times the data it needs." + ADVICE
    )
    summary = f"Uncoalesced global access: {share:.0%} of sectors fetched are wasted"
    return Bottleneck(KIND, score, summary, hint, evidence, top_lines(k, "excessive_sectors"))
