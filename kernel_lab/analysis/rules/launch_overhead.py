"""launch_overhead: the kernel is shorter than the cost of launching it.

A launch from Python costs about LAUNCH_COST_NS of CPU time; back-to-back launches of a kernel
shorter than that leave the GPU waiting for the CPU. A call then costs about the launch plus the kernel, so
the score is the launch's share, cost / (cost + duration), and the conductor gives everything inside the
kernel the rest.
"""

from __future__ import annotations

from kernel_lab import metrics as M
from kernel_lab.models import Bottleneck, Kernel

KIND = "launch_overhead"
NEEDS = ((M.DURATION,),)
SEARCH = (+1, 0, "more work per launch amortizes the launch cost")
LAUNCH_COST_NS = 5_000.0


def evaluate(k: Kernel) -> Bottleneck | None:
    duration = k.value(M.DURATION)
    if duration >= LAUNCH_COST_NS:
        return None
    hint = (
        f"The kernel runs for only {duration / 1000:.1f} µs, less than the ~{LAUNCH_COST_NS / 1000:.0f} µs"
        " it takes to launch a kernel from Python, so in a sequence of launches the GPU waits for the"
        " CPU. Give each launch more work (batch several problems), fuse this kernel with its neighbours,"
        " or capture the sequence of launches in a CUDA graph (torch.cuda.CUDAGraph) and replay it."
    )
    summary = f"Launch overhead: {duration / 1000:.1f} µs kernel vs ~{LAUNCH_COST_NS / 1000:.0f} µs launch cost"
    return Bottleneck(KIND, LAUNCH_COST_NS / (LAUNCH_COST_NS + duration), summary, hint, {M.DURATION: duration})
