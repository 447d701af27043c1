"""atomic_contention: many threads apply atomics to the same few addresses, and wait for each other.

Atomic updates of one address are applied one at a time in L2, so a sum where every thread adds to one
counter runs at the speed of that one address. It shows as atomic traffic (L2 red/atom requests) while the
warps stall waiting for memory operations to drain or for the memory-instruction queue (drain, lg_throttle,
membar stalls). Score: the share of stall cycles in those reasons.
"""

from __future__ import annotations

from kernel_lab import metrics as M
from kernel_lab.models import Bottleneck, Kernel

KIND = "atomic_contention"
RED = "lts__t_requests_srcunit_tex_op_red.sum"
ATOM = ("lts__t_requests_srcunit_tex_op_atom_dot_alu.sum", "lts__t_requests_srcunit_tex_op_atom_dot_cas.sum")
NEEDS = ((RED, *ATOM),)
READS = (M.STALL_PREFIX + "*" + M.STALL_SUFFIX,)
SEARCH = None  # the fix changes the algorithm (reduce first), not the launch
WAITING_ON_ATOMICS = ("drain", "lg_throttle", "membar")
MIN_SHARE = 0.10


def evaluate(k: Kernel) -> Bottleneck | None:
    requests = k.value(RED) + sum(k.value(m) for m in ATOM)
    stalls = M.stall_reasons(k)
    total = sum(stalls.values())
    if not requests or not total:
        return None
    share = sum(stalls.get(r, 0.0) for r in WAITING_ON_ATOMICS) / total
    if share < MIN_SHARE:
        return None
    evidence = {RED: k.value(RED), **{m: k.value(m) for m in ATOM if k.value(m)}, "atomic_stall_share": round(share, 3)}
    hint = (
        f"The kernel sends {requests:,.0f} atomic updates to L2, and {share:.0%} of the time its warps wait for"
        " memory operations to drain: atomics to the same address are applied one after another, so every thread"
        " adding to one counter runs at the speed of that one address. Combine first, then update once: reduce"
        " within the warp (shuffles, or tl.sum in Triton) and the block (shared memory), then one atomic per block;"
        " or write per-block partial results and add them in a second, small kernel."
    )
    summary = f"Atomic contention: {share:.0%} of stall cycles wait on {requests:,.0f} atomic updates"
    return Bottleneck(KIND, min(share, 0.95), summary, hint, evidence)
