"""register_spills: values that live in slow local memory: register spills, or per-thread arrays.

Local memory is per-thread memory in the cache/DRAM hierarchy. The compiler puts values there when registers
run out (spills: spill instructions), and also arrays a thread indexes at run time (``float buf[64];
buf[i & 63]``), which registers cannot hold: then there are no spill instructions at all, but the traffic
is the same. Either way the rule fires on local memory requests, and says which of the two it is.

Score: the share of the kernel's memory requests that go to local memory, weighted by how much the kernel's
time depends on memory requests: the memory (or SM) throughput where bandwidth sets the pace, or, where
latency does, the share of warp stalls spent waiting on global/local memory (long_scoreboard: data from
L1TEX; lg_throttle: the global/local instruction queue is full), whichever is larger.
"""

from __future__ import annotations

from kernel_lab import metrics as M
from kernel_lab.analysis.rules._text import count
from kernel_lab.models import Bottleneck, Kernel

KIND = "register_spills"
NEEDS = ((M.SPILL_REQUESTS, M.LOCAL_LD_REQUESTS, M.LOCAL_ST_REQUESTS, M.GLOBAL_LD_REQUESTS, M.GLOBAL_ST_REQUESTS, M.MEM_PCT),)
READS = (M.REGISTERS, M.SM_PCT, M.STALL_PREFIX + "*" + M.STALL_SUFFIX)
NCU_TITLES = ("L1TEX Local Load Access Pattern", "L1TEX Local Store Access Pattern")
SEARCH = (-1, +1, "smaller tiles per thread need fewer registers, so nothing spills")
WAITING_ON_MEMORY = ("long_scoreboard", "lg_throttle")


def memory_wait(k: Kernel) -> float:
    """Share of the warps' stall cycles spent waiting on global or local memory (0 without stall metrics)."""
    stalls = M.stall_reasons(k)
    total = sum(stalls.values())
    return sum(stalls.get(r, 0.0) for r in WAITING_ON_MEMORY) / total if total else 0.0


def evaluate(k: Kernel) -> Bottleneck | None:
    spills = k.value(M.SPILL_REQUESTS)
    local = k.value(M.LOCAL_LD_REQUESTS) + k.value(M.LOCAL_ST_REQUESTS)
    if local <= 0:
        return None
    share = local / (local + k.value(M.GLOBAL_LD_REQUESTS) + k.value(M.GLOBAL_ST_REQUESTS) or 1)
    regs = k.get(M.REGISTERS)
    if spills > 0:
        what = (
            f"The compiler ran out of registers{f' ({regs:.0f} per thread)' if regs else ''} and keeps some"
            f" values in local memory, which lives in the cache/DRAM hierarchy: {count(spills)} spill requests, and"
        )
        summary = f"Register spills: {count(spills)} spill requests, {share:.0%} of memory requests local"
    else:
        what = (
            "The kernel keeps a per-thread array in local memory, which lives in the cache/DRAM hierarchy: it is"
            " indexed at run time, so registers cannot hold it (there are no spills;"
        )
        what += " the array itself is the traffic), and"
        summary = f"Local memory: a per-thread array indexed at run time, {share:.0%} of memory requests local"
    hint = (
        f"{what} {share:.0%} of the kernel's memory requests go to local memory. Hold fewer values per thread:"
        " index per-thread arrays only with compile-time constants (unrolled loops) or move them to shared"
        " memory, use smaller tiles per thread (Triton: smaller BLOCK sizes or more num_warps), and a looser"
        " __launch_bounds__ / -maxrregcount in CUDA."
    )
    evidence = {
        M.SPILL_REQUESTS: spills,
        M.LOCAL_LD_REQUESTS: k.value(M.LOCAL_LD_REQUESTS),
        M.LOCAL_ST_REQUESTS: k.value(M.LOCAL_ST_REQUESTS),
    }
    if regs:
        evidence[M.REGISTERS] = regs
    weight = max(k.value(M.MEM_PCT) / 100, (k.get(M.SM_PCT) or 0) / 100, memory_wait(k))
    return Bottleneck(KIND, share * weight, summary, hint, evidence)
