"""latency_bound: neither the SMs nor memory are busy; warps mostly wait (SOL both under 60%).

Score: half the headroom to the nearest roof, 1 - max(SM%, memory%, busiest pipe%) / 100. The busiest pipe counts
because on Hopper the SM throughput leaves the tensor pipe's cycles out: a flash-attention kernel can show SM 38%
with its tensor pipe 52% busy, and is then not idle waiting.
"""

from __future__ import annotations

from kernel_lab import metrics as M
from kernel_lab.analysis.source import top_lines
from kernel_lab.models import Bottleneck, Kernel

KIND = "latency_bound"
NEEDS = ((M.SM_PCT, M.MEM_PCT),)
READS = (M.STALL_PREFIX + "*" + M.STALL_SUFFIX, M.ISSUE_ACTIVE, M.PIPE_PREFIX + "*" + M.PIPE_SUFFIX)
REGIME = True
NCU_RULES = ("CPIStall", "IssueSlotUtilization")
NCU_TITLES = ("Latency Issue",)
SEARCH = (+1, +1, "more work per program and more warps hide memory latency")
BUSY_PCT = 60.0  # a latency-bound kernel keeps both the SMs and memory under this share of their peak (%)
STALL_ADVICE = {
    "long_scoreboard": "waiting for data from global or local memory: keep more independent loads in flight (more warps, more work per thread, software pipelining / num_stages), or stage data in shared memory",
    "short_scoreboard": "waiting for shared memory or special-function results: fewer, wider shared-memory accesses and no bank conflicts",
    "mio_throttle": "the memory-instruction queue is full: use wider (vectorized) loads and fewer shared-memory instructions",
    "lg_throttle": "too many global/local memory instructions: vectorize loads and avoid local memory",
    "barrier": "waiting at __syncthreads(): balance the work between warps before the barrier, or use fewer barriers",
    "wait": "fixed-latency dependencies between consecutive instructions: give each thread more independent work",
    "math_pipe_throttle": "one math pipeline is oversubscribed",
    "branch_resolving": "branch targets being computed: simplify control flow",
    "no_instruction": "instruction cache misses: smaller unrolled loops",
    "membar": "memory fences: fewer fences or atomics",
    "drain": "waiting for memory writes to finish at exit",
    "dispatch_stall": "the dispatcher is stalled",
    "not_selected": "warps are ready but others were picked: there is plenty of parallelism",
    "sleeping": "warps sleeping (nanosleep or yield)",
    "tex_throttle": "the texture pipeline is full",
    "imc_miss": "constant-cache misses",
    "misc": "miscellaneous reasons",
    "gmma": "waiting for warpgroup MMA (wgmma) results",
}


def evaluate(k: Kernel) -> Bottleneck | None:
    sm, mem = k.value(M.SM_PCT), k.value(M.MEM_PCT)
    if max(sm, mem) >= BUSY_PCT:
        return None
    pipe, busy = M.busiest_pipe(k) or ("", 0.0)
    top = max(sm, mem, busy)
    evidence = {M.SM_PCT: sm, M.MEM_PCT: mem}
    stall_text = ""
    stalls = M.stall_reasons(k)
    if stalls:
        reason, cycles = max(stalls.items(), key=lambda x: x[1])
        evidence[f"{M.STALL_PREFIX}{reason}{M.STALL_SUFFIX}"] = cycles
        stall_text = (
            f" The most common reason a warp waits is '{reason}' ({cycles:.1f} cycles per issued"
            f" instruction): {STALL_ADVICE.get(reason, 'see the Warp State section')}."
        )
    if k.has(M.ISSUE_ACTIVE):
        evidence[M.ISSUE_ACTIVE] = k.value(M.ISSUE_ACTIVE)
    hint = (
        f"Neither the SMs ({sm:.0f}% of peak) nor memory ({mem:.0f}%) are busy: warps spend most of their"
        " time waiting for results, and there is not enough independent work to hide that wait."
        f"{stall_text} In general: more warps per SM (higher occupancy), more independent work per"
        " thread (instruction-level parallelism), and fewer dependent round trips to memory."
    )
    if busy > max(sm, mem):
        evidence[f"{M.PIPE_PREFIX}{pipe}{M.PIPE_SUFFIX}"] = busy
        hint += f" Its busiest pipe ({pipe}) is {busy:.0f}% busy, so less is left to win than the SM figure suggests."
    summary = f"Latency-bound: SMs at {sm:.0f}%, memory at {mem:.0f}% of peak"
    return Bottleneck(KIND, 0.5 * (1 - top / 100), summary, hint, evidence, top_lines(k, "stall_samples"))
