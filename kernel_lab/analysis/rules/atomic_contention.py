"""atomic_contention: many threads apply atomics to the same few addresses, and wait for each other.

Atomic updates of one address are applied one at a time in L2, so a sum where every thread adds to one
counter runs at the speed of that one address. It shows two ways:

* the warps stall waiting for memory operations to drain (drain, membar stalls). A full memory-instruction queue
  (lg_throttle) does not count: spread-out atomics fill it as any stream of memory instructions does, and atomics
  that queue on a few addresses show in their slice, below;
* one address lives in one L2 slice, so the atomic unit of the busiest slice works far more than the
  average slice's (``lts__d_atomic_input_cycles_active`` max against avg): the excess is time spent
  applying updates one after another that spread-out atomics would share among all slices.

Score: the larger of the two shares, the stall cycles in those reasons and the busiest slice's excess
atomic-unit time (percent of the elapsed time above the average slice's) weighted by how busy that slice is: the
kernel waits on a slice in proportion to how near it is to saturation (at a quarter busy the updates are absorbed as
they come; at four fifths they queue).
"""

from __future__ import annotations

from kernel_lab import metrics as M
from kernel_lab.models import Bottleneck, Kernel

KIND = "atomic_contention"
RED = "lts__t_requests_srcunit_tex_op_red.sum"
ATOM = ("lts__t_requests_srcunit_tex_op_atom_dot_alu.sum", "lts__t_requests_srcunit_tex_op_atom_dot_cas.sum")
NEEDS = ((RED, *ATOM),)
READS = (M.STALL_PREFIX + "*" + M.STALL_SUFFIX, M.ATOMIC_UNIT_AVG, M.ATOMIC_UNIT_MAX)
SEARCH = None  # the fix changes the algorithm (reduce first), not the launch
WAITING_ON_ATOMICS = ("drain", "membar")
MIN_SHARE = 0.10


def hot_slice(k: Kernel) -> float:
    """Share of the elapsed time the busiest L2 slice's atomic unit works beyond the average slice's, weighted by how
    busy it is (0 if unknown)."""
    if not k.has(M.ATOMIC_UNIT_AVG, M.ATOMIC_UNIT_MAX):
        return 0.0
    busiest = k.value(M.ATOMIC_UNIT_MAX) / 100
    return max(0.0, busiest - k.value(M.ATOMIC_UNIT_AVG) / 100) * min(busiest, 1.0)


def evaluate(k: Kernel) -> Bottleneck | None:
    requests = k.value(RED) + sum(k.value(m) for m in ATOM)
    if not requests:
        return None
    stalls = M.stall_reasons(k)
    total = sum(stalls.values())
    share = sum(stalls.get(r, 0.0) for r in WAITING_ON_ATOMICS) / total if total else 0.0
    hot = hot_slice(k)
    if max(share, hot) < MIN_SHARE:
        return None
    evidence = {RED: k.value(RED), **{m: k.value(m) for m in ATOM if k.value(m)}, "atomic_stall_share": round(share, 3)}
    if hot:
        evidence.update({M.ATOMIC_UNIT_MAX: k.value(M.ATOMIC_UNIT_MAX), M.ATOMIC_UNIT_AVG: k.value(M.ATOMIC_UNIT_AVG)})
    slice_text = (
        f" The atomic unit of the busiest L2 slice is {k.value(M.ATOMIC_UNIT_MAX):.0f}% busy against"
        f" {k.value(M.ATOMIC_UNIT_AVG):.1f}% for the average slice: the updates land on the few addresses one slice holds."
        if hot >= MIN_SHARE
        else ""
    )
    hint = (
        f"The kernel sends {requests:,.0f} atomic updates to L2, and {share:.0%} of the time its warps wait for"
        f" memory operations to drain.{slice_text} Atomics to the same address are applied one after another, so"
        " every thread adding to one counter runs at the speed of that one address. Combine first, then update once:"
        " reduce within the warp (shuffles, or tl.sum in Triton) and the block (shared memory), then one atomic per"
        " block; or write per-block partial results and add them in a second, small kernel."
    )
    waits = max(share, hot)
    summary = f"Atomic contention: {requests:,.0f} atomic updates, about {waits:.0%} of the time waiting on them"
    return Bottleneck(KIND, min(waits, 0.95), summary, hint, evidence)
