"""The conductor's verdict on real reports of kernels that each plant one bottleneck."""

from __future__ import annotations

import json

import pytest

from kernel_lab import api, samples
from kernel_lab.models import KINDS, LIMITERS

#: sample -> the bottleneck that must be ranked first
PRIMARY = {
    "memory_bound": "memory_bound",
    "uncoalesced_global": "uncoalesced_global",
    "shared_bank_conflicts": "shared_bank_conflicts",
    "low_occupancy_registers": "low_occupancy",
    "low_occupancy_shared": "low_occupancy",
    "small_grid": "small_grid",
    "tail_effect": "tail_effect",
    "register_spills": "register_spills",
    "warp_divergence": "warp_divergence",
    "tensor_cores_unused": "tensor_cores_unused",
    "compute_bound": "compute_bound",
    "latency_bound": "latency_bound",
    "launch_overhead": "launch_overhead",
    "bf16_gemm": "compute_bound",
}


def top(name: str):
    (diagnosis,) = api.diagnose(samples.report(name)).diagnoses
    return diagnosis


@pytest.mark.parametrize("name", sorted(PRIMARY))
def test_primary_bottleneck_is_ranked_first(name):
    d = top(name)
    assert d.bottlenecks, f"nothing found for {name}"
    assert d.bottlenecks[0].kind == PRIMARY[name], [(b.kind, round(b.score, 3)) for b in d.bottlenecks]


@pytest.mark.parametrize("name", samples.names())
def test_ranking_is_best_first_with_known_kinds(name):
    for d in api.diagnose(samples.report(name)).diagnoses:
        scores = [b.score for b in d.bottlenecks]
        assert scores == sorted(scores, reverse=True)
        assert all(0 <= s <= 1 for s in scores)
        assert all(b.kind in KINDS and b.hint and b.evidence for b in d.bottlenecks)


@pytest.mark.parametrize(
    ("name", "limiter"), [("low_occupancy_registers", "registers"), ("low_occupancy_shared", "shared_memory")]
)
def test_occupancy_limiter_is_named(name, limiter):
    first = top(name).bottlenecks[0]
    assert first.limiter == limiter and limiter in LIMITERS
    assert first.to_dict()["limiter"] == limiter


def test_padded_transpose_has_no_bank_conflicts():
    assert "shared_bank_conflicts" not in [b.kind for b in top("transpose_padded").bottlenecks]


def test_vector_add_is_near_the_dram_roof_so_the_gain_is_fewer_bytes():
    first = top("memory_bound").bottlenecks[0]
    assert "near the DRAM roofline" in first.hint and "moving fewer bytes" in first.hint
    assert first.evidence["gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed"] >= 75


def test_uncoalesced_points_at_the_load_line():
    first = top("uncoalesced_global").bottlenecks[0]
    assert first.source_lines and "tl.load" in first.source_lines[0].text
    assert first.source_lines[0].file.endswith("uncoalesced_global.py")
    assert any(r.rule == "UncoalescedGlobalAccess" for r in first.ncu_rules)


def test_bank_conflicts_carry_nsight_computes_own_rule():
    first = top("shared_bank_conflicts").bottlenecks[0]
    assert any(r.rule == "SharedMemoryConflicts" and r.speedup_pct for r in first.ncu_rules)
    assert first.evidence["n_way"] > 4


def test_json_shape_is_stable():
    data = json.loads(api.diagnose(samples.report("low_occupancy_registers")).to_json())
    assert isinstance(data, list) and set(data[0]) == {"kernel", "bottlenecks", "not_evaluated"}
    b = data[0]["bottlenecks"][0]
    assert {"kind", "score", "evidence", "hint", "source_lines"} <= set(b)
    assert isinstance(b["score"], float) and isinstance(b["evidence"], dict)


def test_fp32_elementwise_code_is_not_told_to_use_tensor_cores():
    # fp32 GELU from the autotune race (H100): its HFMA2 instructions are register moves, not half math
    from pathlib import Path

    (diagnosis,) = api.diagnose(Path(__file__).parent / "data" / "race" / "gelu_block16_v000.ncu-rep").diagnoses
    kinds = [b.kind for b in diagnosis.bottlenecks]
    assert "tensor_cores_unused" not in kinds and kinds[0] == "latency_bound"
    assert top("tensor_cores_unused").bottlenecks[0].kind == "tensor_cores_unused"  # real fp16 matrix work still is


def test_near_the_dram_roof_what_is_left_is_counted_up_to_the_rate_kernels_reach():
    from kernel_lab.analysis.conductor import left
    from kernel_lab.analysis.roofline import DRAM_REACHED

    assert left({"roof": "DRAM", "fraction": 0.786}) == pytest.approx(1 - 0.786 / DRAM_REACHED)  # 13.6%, not 21.4%
    assert left({"roof": "DRAM", "fraction": 0.95}) == 0.0  # past the rate kernels reach: nothing left
    assert left({"roof": "Tensor BF16/FP16", "fraction": 0.85}) == pytest.approx(0.15)


def test_a_capped_reading_says_how_little_is_left():
    from kernel_lab.analysis.conductor import capped
    from kernel_lab.models import Bottleneck

    tail = Bottleneck("tail_effect", 0.26, "Tail effect", "About 35% of SM time is lost.")
    roof = {"roof": "DRAM", "fraction": 0.786}
    lowered = capped(tail, roof)
    assert lowered.score == pytest.approx(0.136, abs=1e-3)
    assert lowered.hint.endswith("Near the DRAM roof, though, this can save at most about 14% of the time.")
    small = Bottleneck("tail_effect", 0.05, "Tail effect", "About 6% of SM time is lost.")
    assert capped(small, roof) == small  # under the cap: as it was
