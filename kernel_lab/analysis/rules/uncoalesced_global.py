"""uncoalesced_global: a warp's global accesses fetch sectors it does not use (ncu's UncoalescedGlobalAccess).

Score: the share of L2 sectors that are excessive, weighted by L2 throughput (% of peak): the time the excess
costs where L2 bandwidth sets the pace, little where latency does. Two corrections, both about what a
coalescing fix can change:

* Excess on lines whose addresses are computed from loaded data (a gather ``x[col[k]]``, a pointer chase
  ``tl.load(p + node)`` with ``node`` loaded) is left out: the data, not the mapping of threads to elements,
  scatters those addresses, so no re-indexing coalesces them (the kernel's regime accounts for that traffic).
* The fix cannot save the time DRAM still needs: a coalesced kernel still moves the ideal sectors, at best at the
  DRAM rate kernels reach (``DRAM_REACHED`` of ncu's peak, not the peak itself), so the saving is capped at
  1 - DRAM throughput / DRAM_REACHED x (the share of DRAM bytes a coalesced version would still move). A kernel
  near its DRAM roof whose wasted sectors are served from the caches has little to win.
* Nor the time its busiest pipeline still needs: a coalescing fix moves fewer sectors but leaves every arithmetic
  instruction to execute, so the saving is capped at 1 - that pipe's share of the active cycles (a kernel whose ALU
  pipe is 94% busy wins at most 6% however its stores fall).

Without source counters, falls back to the bytes used per 32-byte sector of global loads.
"""

from __future__ import annotations

from kernel_lab import metrics as M
from kernel_lab.analysis.roofline import DRAM_REACHED
from kernel_lab.analysis.rules._text import count
from kernel_lab.analysis.source import indirect_share, top_lines
from kernel_lab.models import Bottleneck, Kernel

KIND = "uncoalesced_global"
NEEDS = (
    (M.SECTORS_EXCESSIVE, M.SECTORS_GLOBAL, M.LTS_ACTIVE, M.LTS_ELAPSED),
    (M.BYTES_PER_SECTOR_LD, M.L2_PCT),
)
READS = (M.BYTES_PER_SECTOR_LD, M.L2_PCT, M.DRAM_PCT, M.DRAM_READ, M.DRAM_WRITE, M.PIPE_PREFIX + "*" + M.PIPE_SUFFIX)
NCU_RULES = ("UncoalescedGlobalAccess",)
NCU_TITLES = (
    "L1TEX Global Load Access Pattern",
    "L2 Global Load Access Pattern",
    "DRAM Global Load Access Pattern",
    "L1TEX Global Store Access Pattern",
    "L2 Global Store Access Pattern",
)
MIN_EXCESSIVE = 0.10
SECTOR_BYTES = 32
ADVICE = (
    " Make consecutive threads touch consecutive addresses: in Triton the fastest-varying index of"
    " tl.arange must walk the contiguous dimension of the tensor (swap the index order or load a tile"
    " and use tl.trans); in CUDA threadIdx.x must index the contiguous dimension, and a transpose-like"
    " access should go through a shared-memory tile."
)


def dram_cap(k: Kernel, ideal_sectors: float) -> float:
    """The most a coalescing fix can save while DRAM still moves what a coalesced kernel needs (1 if unknown)."""
    moved = (k.get(M.DRAM_READ) or 0) + (k.get(M.DRAM_WRITE) or 0)
    if not k.has(M.DRAM_PCT) or moved <= 0:
        return 1.0
    still_moved = min(1.0, ideal_sectors * SECTOR_BYTES / moved)  # a coalesced kernel moves at least the ideal sectors
    return 1 - min(k.value(M.DRAM_PCT) / 100 / DRAM_REACHED, 1.0) * still_moved


def compute_cap(k: Kernel) -> float:
    """The most a coalescing fix can save while the busiest pipeline still executes what it does (1 if unknown)."""
    top = M.busiest_pipe(k)
    return 1 - min(top[1] / 100, 1.0) if top else 1.0


def evaluate(k: Kernel) -> Bottleneck | None:
    gather = ""
    if k.has(M.SECTORS_EXCESSIVE, M.SECTORS_GLOBAL, M.LTS_ACTIVE, M.LTS_ELAPSED):
        total, excessive = k.value(M.SECTORS_GLOBAL), k.value(M.SECTORS_EXCESSIVE)
        inherent = indirect_share(k, "excessive_sectors")
        fixable = excessive * (1 - inherent)
        share = fixable / total if total else 0.0
        if share < MIN_EXCESSIVE:
            return None
        # the wasted sectors cost time in proportion to how busy L2 is (a latency-bound kernel barely feels them)
        busy = k.value(M.L2_PCT) / 100 if k.has(M.L2_PCT) else k.value(M.LTS_ACTIVE) / k.value(M.LTS_ELAPSED)
        score = min(share * busy, dram_cap(k, total - fixable), compute_cap(k))
        evidence = {M.SECTORS_EXCESSIVE: excessive, M.SECTORS_GLOBAL: total}
        what = (
            f"{share:.0%} of the {count(total)} 32-byte sectors the kernel fetched from L2 for global"
            " memory were not needed by the threads that asked for them"
        )
        if inherent >= MIN_EXCESSIVE:
            evidence["gathered_share_of_excess"] = round(inherent, 3)
            gather = (
                f" (Another {inherent * excessive / total:.0%} are wasted by loads whose addresses come from loaded"
                " data, a gather: only reordering the data or sorting the indices helps those.)"
            )
    else:
        used = k.value(M.BYTES_PER_SECTOR_LD)
        if used >= 32 * (1 - MIN_EXCESSIVE) or used <= 0:
            return None
        share = 1 - used / 32
        score = min(share * k.value(M.L2_PCT) / 100, compute_cap(k))
        evidence = {M.BYTES_PER_SECTOR_LD: used}
        what = f"global loads use only {used:.1f} of the 32 bytes of every sector they fetch"
    for m in (M.BYTES_PER_SECTOR_LD, M.L2_PCT, M.DRAM_PCT):
        if k.has(m):
            evidence[m] = k.value(m)
    hint = (
        f"Uncoalesced global memory access: {what}.{gather} Memory moves in 32-byte sectors; when the 32 threads"
        " of a warp read addresses far apart, each thread's 4 bytes cost a whole sector, so the kernel"
        " moves several times the data it needs." + ADVICE
    )
    summary = f"Uncoalesced global access: {share:.0%} of sectors fetched are wasted"
    return Bottleneck(KIND, max(score, 0.0), summary, hint, evidence, top_lines(k, "excessive_sectors"))
