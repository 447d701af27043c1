"""compute_bound: the SMs' pipelines, not memory, set the pace.

Score: the time saved if a remedy (cheaper math, tensor cores, fewer instructions) halved the
instruction work: 0.5 x SM throughput (fraction of peak).
"""

from __future__ import annotations

from kernel_lab import metrics as M
from kernel_lab.analysis.source import top_lines
from kernel_lab.models import Bottleneck, Kernel

KIND = "compute_bound"
NEEDS = ((M.SM_PCT, M.MEM_PCT),)
READS = (M.PIPE_PREFIX + "*" + M.PIPE_SUFFIX,)
REGIME = True
NCU_TITLES = ("High Compute Throughput", "High Utilization", "Very High Utilization")
SEARCH = (+1, 0, "bigger tiles amortize index arithmetic over more elements")
PIPE_ADVICE = {
    "fma": "floating-point multiply-add: do less arithmetic per element, or move matrix-shaped math to tensor cores (tl.dot / mma)",
    "alu": "integer and logic operations, often index arithmetic: hoist index computations out of loops, use power-of-two sizes so divisions become shifts",
    "fp64": "double precision, which runs at half the FP32 rate: use float32 where accuracy allows",
    "xu": "special functions (exp, sin, sqrt, division): use fast intrinsics (__expf, tl.math fast paths) or fewer calls",
    "tensor": "tensor cores: this is the fastest math on the GPU; the next step is a lower precision (fp8) or less work",
    "shared": "shared-memory instructions: load wider (vectorized) and reuse values from registers",
}


def evaluate(k: Kernel) -> Bottleneck | None:
    sm, mem = k.value(M.SM_PCT), k.value(M.MEM_PCT)
    if sm < 60 or sm <= mem:
        return None
    pipes = M.pipe_utilization(k)
    evidence = {M.SM_PCT: sm, M.MEM_PCT: mem}
    busiest = ""
    if pipes:
        pipe, pct = max(pipes.items(), key=lambda x: x[1])
        evidence[f"{M.PIPE_PREFIX}{pipe}{M.PIPE_SUFFIX}"] = pct
        advice = PIPE_ADVICE.get(pipe.split("_")[0], "")
        busiest = f" The busiest pipeline is '{pipe}' at {pct:.0f}% of its peak" + (f" ({advice})." if advice else ".")
    hint = (
        f"The SMs are {sm:.0f}% busy executing instructions while memory is at {mem:.0f}%: the kernel is"
        f" limited by arithmetic, not data movement.{busiest} To go faster the kernel has to execute"
        " fewer or cheaper instructions."
    )
    summary = f"Compute-bound: SMs at {sm:.0f}% of peak, memory at {mem:.0f}%"
    return Bottleneck(KIND, 0.5 * sm / 100, summary, hint, evidence, top_lines(k, "stall_samples"))
