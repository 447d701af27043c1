"""compute_bound: the SMs' pipelines, not memory, set the pace.

Score: the time a remedy (cheaper math, tensor cores, fewer instructions) would save: SAVES x SM throughput
(fraction of peak). Near a compute roof (the roofline shows it at 80% or more of the ceiling of its precision),
the kernel is compute-bound whatever the memory throughput says, and the score is what is left to that roof.
"""

from __future__ import annotations

from kernel_lab import metrics as M
from kernel_lab.analysis.roofline import NEAR, compute_roof
from kernel_lab.analysis.roofline import READS as ROOFLINE_READS
from kernel_lab.analysis.source import top_lines
from kernel_lab.models import Bottleneck, Kernel

KIND = "compute_bound"
NEEDS = ((M.SM_PCT, M.MEM_PCT),)
READS = (M.PIPE_PREFIX + "*" + M.PIPE_SUFFIX, *ROOFLINE_READS)
REGIME = True
NCU_TITLES = ("High Compute Throughput", "High Utilization", "Very High Utilization")
SEARCH = (+1, 0, "bigger tiles amortize index arithmetic over more elements")
#: share of the SM time a typical remedy saves: memory_bound's calibrated value (no suite pair measures a
#: compute-side fix on its own, so this one is not calibrated)
SAVES = 0.3
MIN_SM_PCT = 60.0  # SM throughput (% of peak) a compute-bound kernel reaches at least, above memory's
PIPE_ADVICE = {
    "fma": "floating-point multiply-add: do less arithmetic per element, or move matrix-shaped math to tensor cores (tl.dot / mma)",
    "alu": "integer and logic operations, often index arithmetic: hoist index computations out of loops, use power-of-two sizes so divisions become shifts",
    "fp64": "double precision, which runs at half the FP32 rate: use float32 where accuracy allows",
    "xu": "special functions (exp, sin, sqrt, division): use fast intrinsics (__expf, tl.math fast paths) or fewer calls",
    "tensor": "tensor cores: this is the fastest math on the GPU; the next step is a lower precision (fp8) or less work",
    # on Hopper, ncu's "shared" pipe is the one FP64 and tensor-core instructions share, not shared memory
    "shared": "the pipe that FP64 and tensor-core instructions share (not shared memory): for tensor work, the fastest math on the GPU",
}


def evaluate(k: Kernel) -> Bottleneck | None:
    sm, mem = k.value(M.SM_PCT), k.value(M.MEM_PCT)
    at_roof = compute_roof(k)
    near = at_roof is not None and at_roof[0] >= NEAR
    if sm < MIN_SM_PCT or (sm <= mem and not near):
        return None
    evidence = {M.SM_PCT: sm, M.MEM_PCT: mem}
    busiest = ""
    if top := M.busiest_pipe(k):
        pipe, pct = top
        evidence[f"{M.PIPE_PREFIX}{pipe}{M.PIPE_SUFFIX}"] = pct
        advice = PIPE_ADVICE.get(pipe.split("_")[0], "")
        busiest = f" The busiest pipeline is '{pipe}' at {pct:.0f}% of its peak" + (f" ({advice})." if advice else ".")
    if near and at_roof is not None:
        evidence["compute_roof_fraction"] = round(at_roof[0], 3)
        hint = (
            f"The kernel runs at {at_roof[0]:.0%} of the {at_roof[1]} roof: it is near the fastest this GPU does"
            f" that arithmetic, so little is left to gain by tuning (smaller tiles or more occupancy would not help).{busiest}"
            " The remaining gains are in doing less work or using a lower precision where accuracy allows."
        )
        summary = f"Compute-bound, at {at_roof[0]:.0%} of the {at_roof[1]} roof"
        return Bottleneck(KIND, 1 - at_roof[0], summary, hint, evidence, top_lines(k, "stall_samples"))
    hint = (
        f"The SMs are {sm:.0f}% busy executing instructions while memory is at {mem:.0f}%: the kernel is"
        f" limited by arithmetic, not data movement.{busiest} To go faster the kernel has to execute"
        " fewer or cheaper instructions."
    )
    summary = f"Compute-bound: SMs at {sm:.0f}% of peak, memory at {mem:.0f}%"
    return Bottleneck(KIND, SAVES * sm / 100, summary, hint, evidence, top_lines(k, "stall_samples"))
