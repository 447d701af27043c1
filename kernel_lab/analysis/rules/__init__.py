"""One module per bottleneck kind. Each declares ``KIND``, ``NEEDS`` (alternative sets of metric
names, any one of which must be present) and ``evaluate(kernel) -> Bottleneck | None``."""
from kernel_lab.analysis.rules import (
    compute_bound,
    latency_bound,
    launch_overhead,
    low_occupancy,
    memory_bound,
    register_spills,
    shared_bank_conflicts,
    small_grid,
    tail_effect,
    tensor_cores_unused,
    uncoalesced_global,
    warp_divergence,
)

RULES = (
    memory_bound,
    compute_bound,
    latency_bound,
    low_occupancy,
    uncoalesced_global,
    shared_bank_conflicts,
    small_grid,
    tail_effect,
    warp_divergence,
    register_spills,
    tensor_cores_unused,
    launch_overhead,
)
#: Kinds that describe which roof a kernel is under rather than a specific cause.
REGIMES = frozenset({"memory_bound", "compute_bound", "latency_bound"})
