"""warp_divergence: lanes of a warp take different paths, so many are masked off (ncu's ThreadDivergence).

Divergence is lanes switched off by branches: fewer than THRESHOLD active threads per instruction. Lanes that are
all active but predicated off (a short conditional statement compiled to predicated instructions) run no second
path: with 32 active threads that is predication, not divergence (ncu's rule counts it too).

Score: the idle lane share, 1 - min(active, predicated-on threads per instruction) / 32,
weighted by SM throughput (as ncu does).
"""

from __future__ import annotations

from kernel_lab import metrics as M
from kernel_lab.analysis.source import line_text
from kernel_lab.models import Bottleneck, Kernel, SourceLine

KIND = "warp_divergence"
NEEDS = ((M.THREADS_PER_INST, M.THREADS_PRED_ON_PER_INST, M.SM_PCT),)
NCU_RULES = ("ThreadDivergence",)
THRESHOLD = 24.0


def _divergent_lines(k: Kernel, n: int = 3) -> tuple[SourceLine, ...]:
    """Lines ranked by idle lanes: 32 x instructions - thread instructions."""
    inst = k.line_counters.get("instructions", {})
    threads = k.line_counters.get("thread_instructions", {})
    idle = {loc: 32 * v - threads.get(loc, 32 * v) for loc, v in inst.items()}
    total = sum(idle.values())
    if total <= 0:
        return ()
    ranked = sorted(idle.items(), key=lambda x: -x[1])[:n]
    return tuple(SourceLine(f, ln, v / total, line_text(k, f, ln)) for (f, ln), v in ranked if v / total >= 0.05)


def evaluate(k: Kernel) -> Bottleneck | None:
    if k.value(M.THREADS_PER_INST) >= THRESHOLD:  # no branch switches lanes off: at most predication
        return None
    active = min(k.value(M.THREADS_PER_INST), k.value(M.THREADS_PRED_ON_PER_INST))
    idle = 1 - active / 32
    hint = (
        f"Only {active:.1f} of the 32 threads of a warp do useful work per instruction on average. A warp"
        " executes one instruction for all its threads; when threads branch differently, the warp runs"
        " each path in turn with the other threads switched off. Make branch conditions the same across"
        " a warp (branch on the warp or block index, sort or bucket the work so neighbours take the same"
        " path), or turn the branch into data (tl.where / a select) when both paths are short."
    )
    evidence = {
        M.THREADS_PER_INST: k.value(M.THREADS_PER_INST),
        M.THREADS_PRED_ON_PER_INST: k.value(M.THREADS_PRED_ON_PER_INST),
        M.SM_PCT: k.value(M.SM_PCT),
    }
    summary = f"Warp divergence: {active:.1f} of 32 threads active per instruction"
    return Bottleneck(KIND, idle * k.value(M.SM_PCT) / 100, summary, hint, evidence, _divergent_lines(k))
