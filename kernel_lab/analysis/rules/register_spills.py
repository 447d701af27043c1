"""register_spills: values that do not fit in registers live in slow local memory.

Score: the share of the kernel's memory requests that go to local memory (spills and
per-thread arrays), weighted by the memory throughput.
"""

from __future__ import annotations

from kernel_lab import metrics as M
from kernel_lab.analysis.rules._text import count
from kernel_lab.models import Bottleneck, Kernel

KIND = "register_spills"
NEEDS = ((M.SPILL_REQUESTS, M.LOCAL_LD_REQUESTS, M.LOCAL_ST_REQUESTS, M.GLOBAL_LD_REQUESTS, M.GLOBAL_ST_REQUESTS, M.MEM_PCT),)
READS = (M.REGISTERS, M.SM_PCT)
NCU_TITLES = ("L1TEX Local Load Access Pattern", "L1TEX Local Store Access Pattern")
SEARCH = (-1, +1, "smaller tiles per thread need fewer registers, so nothing spills")


def evaluate(k: Kernel) -> Bottleneck | None:
    spills = k.value(M.SPILL_REQUESTS)
    if spills <= 0:
        return None
    local = k.value(M.LOCAL_LD_REQUESTS) + k.value(M.LOCAL_ST_REQUESTS)
    share = local / (local + k.value(M.GLOBAL_LD_REQUESTS) + k.value(M.GLOBAL_ST_REQUESTS) or 1)
    regs = k.get(M.REGISTERS)
    hint = (
        f"The compiler ran out of registers{f' ({regs:.0f} per thread)' if regs else ''} and keeps some"
        f" values in local memory, which lives in the cache/DRAM hierarchy: {count(spills)} spill"
        f" instructions, and {share:.0%} of the kernel's memory requests go to local memory. Hold fewer"
        " values per thread: smaller tiles per thread (Triton: smaller BLOCK sizes or more num_warps),"
        " no large per-thread arrays indexed at run time, and a looser __launch_bounds__ / -maxrregcount"
        " in CUDA."
    )
    evidence = {
        M.SPILL_REQUESTS: spills,
        M.LOCAL_LD_REQUESTS: k.value(M.LOCAL_LD_REQUESTS),
        M.LOCAL_ST_REQUESTS: k.value(M.LOCAL_ST_REQUESTS),
    }
    if regs:
        evidence[M.REGISTERS] = regs
    summary = f"Register spills: {count(spills)} spill instructions, {share:.0%} of memory requests local"
    return Bottleneck(KIND, share * max(k.value(M.MEM_PCT), k.get(M.SM_PCT) or 0) / 100, summary, hint, evidence)
