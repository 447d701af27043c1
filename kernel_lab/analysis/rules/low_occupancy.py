"""low_occupancy: too few warps can be resident per SM to hide latency (ncu's TheoreticalOccupancy).

Score (Little's law): with more resident warps a latency-bound kernel keeps proportionally more work in
flight, until a unit saturates; so filling the SM would save 1 - max(theoretical occupancy, busiest unit's
throughput), of the time warps spend waiting on latency that more warps hide (scoreboard and fixed-latency
stalls, as a share of all stalls), capped by the idle issue slots. The busiest unit is the busiest of the SMs,
the memory system, each memory level (L1, L2, DRAM) and each pipe: the memory SOL does not include every part
of L2, the SM throughput leaves Hopper's tensor pipe out, and a saturated unit leaves more warps nothing to gain.

A grid of less than one wave (fewer blocks than the SMs can hold at once at this occupancy) never reaches the limit:
each SM gets fewer blocks than the limiter allows, so lifting it changes nothing (more blocks would: the grid's size,
not this limit, sets how many warps are resident) and the rule says nothing.

The limiter is the resource that allows the fewest blocks; on a tie the block count and warps come before
registers and shared memory (a one-warp program is limited by the block count whatever else ties with it,
and more warps per program is its fix).
"""

from __future__ import annotations

from kernel_lab import hardware
from kernel_lab import metrics as M
from kernel_lab.models import Bottleneck, Kernel

KIND = "low_occupancy"
NEEDS = ((M.THEORETICAL_OCC, *M.OCCUPANCY_LIMITS.values()),)
UNITS = (M.SM_PCT, M.MEM_PCT, M.L1_PCT, M.L2_PCT, M.DRAM_PCT)  # throughputs, % of peak: the busiest one saturates
READS = (
    *UNITS,
    M.WAVES,
    M.ISSUE_ACTIVE,
    M.ACHIEVED_OCC,
    M.REGISTERS,
    M.SHARED_PER_BLOCK,
    M.BLOCK,
    M.STALL_PREFIX + "*" + M.STALL_SUFFIX,
    M.PIPE_PREFIX + "*" + M.PIPE_SUFFIX,
)
HIDDEN_BY_WARPS = ("long_scoreboard", "short_scoreboard", "wait")  # stalls more warps hide
TIE_ORDER = ("block_size", "warps", "registers", "shared_memory")
NCU_RULES = ("TheoreticalOccupancy", "AchievedOccupancy")
NCU_TITLES = ("Block Size",)
SEARCH = (-1, -1, "smaller tiles and fewer warps per program need fewer registers, so more programs fit per SM")
THRESHOLD_PCT = 80.0


def _advice(limiter: str, k: Kernel, blocks: int) -> str:
    threads = int(k.get(M.BLOCK) or 0)
    arch = k.gpu.arch or hardware.ARCHITECTURES[(9, 0)]  # limits of the GPU it ran on; Hopper's if unknown
    if limiter == "registers":
        regs = int(k.get(M.REGISTERS) or 0)
        return (
            f"Each thread uses {regs} registers; the SM's {arch.registers_per_sm:,} registers then fit only {blocks} block(s)"
            f" of {threads} threads. Lower register use: in Triton use smaller BLOCK sizes or fewer"
            " num_stages (each thread holds less), in CUDA add __launch_bounds__(threads, minBlocks) or"
            " -maxrregcount, and recompute cheap values instead of keeping them alive."
        )
    if limiter == "shared_memory":
        smem = int(k.get(M.SHARED_PER_BLOCK) or 0)
        return (
            f"Each block uses {smem / 1024:.1f} KB of shared memory, so only {blocks} block(s) fit in an"
            " SM's shared memory. Use smaller tiles (Triton: smaller BLOCK_M/N/K or fewer num_stages,"
            " each stage buffers one tile), or reuse one buffer for several tiles in CUDA."
        )
    if limiter == "block_size":
        return (
            f"Blocks of {threads} threads are small: an SM runs at most {arch.max_blocks_per_sm} blocks, so at most"
            f" {arch.max_blocks_per_sm * threads} threads. Use at least 64 threads per block (Triton: num_warps >= 2)."
        )
    return (
        f"With {threads} threads per block only {blocks} block(s) fit in the SM's {arch.max_warps_per_sm} warps, leaving"
        f" warps unused. Pick a block size that divides {32 * arch.max_warps_per_sm} threads (128, 256 or 512)."
    )


def evaluate(k: Kernel) -> Bottleneck | None:
    theoretical = k.value(M.THEORETICAL_OCC)
    if theoretical >= THRESHOLD_PCT or (k.has(M.WAVES) and k.value(M.WAVES) < 1):
        return None
    limits = {name: k.value(metric) for name, metric in M.OCCUPANCY_LIMITS.items()}
    limiter = min(TIE_ORDER, key=lambda name: (limits[name], TIE_ORDER.index(name)))
    pipe = M.busiest_pipe(k)
    busiest = max([k.value(m) for m in UNITS if k.has(m)] + [pipe[1] if pipe else 0.0]) / 100
    stalls = M.stall_reasons(k)
    waiting = sum(stalls.get(r, 0.0) for r in HIDDEN_BY_WARPS) / sum(stalls.values()) if stalls and sum(stalls.values()) else 1.0
    caps = [(1 - max(theoretical / 100, busiest)) * waiting]
    if k.has(M.ISSUE_ACTIVE):
        caps.append(1 - k.value(M.ISSUE_ACTIVE))
    evidence = {M.THEORETICAL_OCC: theoretical, M.OCCUPANCY_LIMITS[limiter]: limits[limiter]}
    evidence.update({m: k.value(m) for m in (M.ACHIEVED_OCC, M.REGISTERS, M.SHARED_PER_BLOCK, M.BLOCK) if k.has(m)})
    hint = (
        f"Only {theoretical:.0f}% of the SM's warp slots can be filled (theoretical occupancy), limited"
        f" by {limiter.replace('_', ' ')}. With few warps resident, when one warp waits for memory there"
        f" is little other work to switch to, so the SM idles. {_advice(limiter, k, int(limits[limiter]))}"
    )
    summary = f"Low occupancy: {theoretical:.0f}% theoretical, limited by {limiter.replace('_', ' ')}"
    return Bottleneck(KIND, max(0.0, min(caps)), summary, hint, evidence, limiter=limiter)
