"""Every rule's thresholds and the conductor's ranking model, on synthetic kernels (the recorded reports are
in test_conductor.py); plug-in rules and rewriters through real entry points."""

from __future__ import annotations

import sys
import textwrap
from dataclasses import replace

import pytest

from kernel_lab import metrics as M
from kernel_lab.analysis import conductor
from kernel_lab.analysis import rules as registry
from kernel_lab.errors import KernelLabError
from kernel_lab.models import Kernel
from kernel_lab.rewrite import available, make
from kernel_lab.settings import Settings

H100 = {"device__attribute_display_name": "NVIDIA H100 80GB HBM3"}
ATTRS = {
    "device__attribute_compute_capability_major": 9.0,
    "device__attribute_compute_capability_minor": 0.0,
    "device__attribute_multiprocessor_count": 132.0,
}


def kernel(**metrics: float) -> Kernel:
    return Kernel(0, "k", "k", {**ATTRS, **metrics}, attributes=H100)


def kinds(k: Kernel) -> dict[str, float]:
    return {b.kind: b.score for b in conductor.diagnose_kernel(k).bottlenecks}


def evaluate(kind: str, k: Kernel):
    (rule,) = [r for r in registry.rules() if r.kind == kind]
    return rule.evaluate(k)


SOL = {M.SM_PCT: 10.0, M.MEM_PCT: 10.0}


# --- each rule fires on one side of its threshold and not on the other --------------------------------


@pytest.mark.parametrize(
    ("kind", "below", "above"),
    [
        ("memory_bound", {M.SM_PCT: 10.0, M.MEM_PCT: 59.0}, {M.SM_PCT: 10.0, M.MEM_PCT: 61.0}),
        ("compute_bound", {M.SM_PCT: 59.0, M.MEM_PCT: 10.0}, {M.SM_PCT: 61.0, M.MEM_PCT: 10.0}),
        ("latency_bound", {M.SM_PCT: 61.0, M.MEM_PCT: 10.0}, {M.SM_PCT: 59.0, M.MEM_PCT: 10.0}),
        ("small_grid", {M.GRID: 132.0, M.SM_COUNT: 132.0}, {M.GRID: 131.0, M.SM_COUNT: 132.0}),
        ("tail_effect", {M.WAVES: 1.95, M.GRID: 1000.0, M.SM_COUNT: 132.0}, {M.WAVES: 1.25, M.GRID: 1000.0, M.SM_COUNT: 132.0}),
        ("launch_overhead", {M.DURATION: 5000.0}, {M.DURATION: 4999.0}),
        (
            "warp_divergence",
            {M.THREADS_PER_INST: 24.0, M.THREADS_PRED_ON_PER_INST: 24.0, M.SM_PCT: 50.0},
            {M.THREADS_PER_INST: 23.9, M.THREADS_PRED_ON_PER_INST: 23.9, M.SM_PCT: 50.0},
        ),
        (
            "shared_bank_conflicts",
            {
                M.SHARED_LD_CONFLICTS: 9.0,
                M.SHARED_ST_CONFLICTS: 0.0,
                M.SHARED_LD_WAVEFRONTS: 100.0,
                M.SHARED_ST_WAVEFRONTS: 0.0,
                M.L1_PCT: 50.0,
            },
            {
                M.SHARED_LD_CONFLICTS: 11.0,
                M.SHARED_ST_CONFLICTS: 0.0,
                M.SHARED_LD_WAVEFRONTS: 100.0,
                M.SHARED_ST_WAVEFRONTS: 0.0,
                M.L1_PCT: 50.0,
            },
        ),
        (
            "uncoalesced_global",
            {M.SECTORS_EXCESSIVE: 9.0, M.SECTORS_GLOBAL: 100.0, M.LTS_ACTIVE: 1.0, M.LTS_ELAPSED: 1.0},
            {M.SECTORS_EXCESSIVE: 11.0, M.SECTORS_GLOBAL: 100.0, M.LTS_ACTIVE: 1.0, M.LTS_ELAPSED: 1.0},
        ),
        (
            "register_spills",
            {
                M.SPILL_REQUESTS: 0.0,
                M.LOCAL_LD_REQUESTS: 0.0,
                M.LOCAL_ST_REQUESTS: 0.0,
                M.GLOBAL_LD_REQUESTS: 9.0,
                M.GLOBAL_ST_REQUESTS: 1.0,
                M.MEM_PCT: 50.0,
            },
            {
                M.SPILL_REQUESTS: 2.0,
                M.LOCAL_LD_REQUESTS: 1.0,
                M.LOCAL_ST_REQUESTS: 1.0,
                M.GLOBAL_LD_REQUESTS: 7.0,
                M.GLOBAL_ST_REQUESTS: 1.0,
                M.MEM_PCT: 50.0,
            },
        ),
    ],
)
def test_threshold(kind, below, above):
    assert evaluate(kind, kernel(**below)) is None
    found = evaluate(kind, kernel(**above))
    assert found is not None and found.kind == kind and 0 < found.score <= 1 and found.hint and found.evidence


def test_scores_follow_their_documented_formulas():
    assert evaluate("memory_bound", kernel(**{M.SM_PCT: 10.0, M.MEM_PCT: 80.0})).score == pytest.approx(0.3 * 0.8)
    assert evaluate("compute_bound", kernel(**{M.SM_PCT: 90.0, M.MEM_PCT: 10.0})).score == pytest.approx(0.3 * 0.9)
    assert evaluate("latency_bound", kernel(**{M.SM_PCT: 20.0, M.MEM_PCT: 30.0})).score == pytest.approx(0.5 * 0.7)
    assert evaluate("small_grid", kernel(**{M.GRID: 33.0, M.SM_COUNT: 132.0})).score == pytest.approx(0.75)
    assert evaluate("tail_effect", kernel(**{M.WAVES: 1.25, M.GRID: 330.0, M.SM_COUNT: 132.0})).score == pytest.approx(
        0.75 * 0.375
    )
    assert evaluate("launch_overhead", kernel(**{M.DURATION: 1000.0})).score == pytest.approx(5000 / 6000)


def test_tensor_core_rule_needs_half_precision_matrix_work_and_no_tensor_instructions():
    base = {M.DURATION: 1e6, M.OPCODE_MIX: 0.0, M.DRAM_READ: 100.0, M.DRAM_WRITE: 100.0}
    matmul = replace(kernel(**base), opcodes={"HFMA2": 50.0, "LDS": 20.0, "IMAD": 30.0})
    found = evaluate("tensor_cores_unused", matmul)
    assert (
        found.score == pytest.approx(0.95) and found.evidence["matrix_flops"] == 32 * 50 * 4
    )  # capped: 1 - 6400 / 989 TF / 1 ms
    fp32 = replace(matmul, opcodes={"FFMA": 50.0, "LDS": 20.0, "IMAD": 30.0})  # an fp32 result cannot take tensor cores
    no_loads = replace(matmul, opcodes={"HFMA2": 50.0, "IMAD": 50.0})  # a polynomial: arithmetic only
    with_tensor = replace(matmul, opcodes={**matmul.opcodes, "HGMMA": 1.0})
    streaming = replace(matmul, metrics={**matmul.metrics, M.DRAM_READ: 1e9})  # no reuse: an elementwise kernel
    assert [evaluate("tensor_cores_unused", k) for k in (fp32, no_loads, with_tensor, streaming)] == [None] * 4
    bf16_in_source = replace(fp32, source_files={"cell.py": "a = torch.randn(n, dtype=torch.bfloat16)"})
    assert evaluate("tensor_cores_unused", bf16_in_source) is not None
    # the toolchain's files name every type: Triton's own modules say nothing of the kernel's data
    triton_own = replace(fp32, source_files={"/v/lib/python3.12/site-packages/triton/language/standard.py": "tl.bfloat16"})
    assert evaluate("tensor_cores_unused", triton_own) is None
    # addresses computed from floats (one conversion per two multiply-adds): sampled data, an interpolation, not tiles
    sampled = replace(matmul, opcodes={**matmul.opcodes, "F2I": 25.0})
    assert evaluate("tensor_cores_unused", sampled) is None


def test_occupancy_limits_come_from_the_device_not_from_literals():
    limits = {
        M.OCCUPANCY_LIMITS[name]: blocks
        for name, blocks in (("registers", 3.0), ("shared_memory", 32.0), ("warps", 16.0), ("block_size", 32.0))
    }
    k = kernel(**{M.THEORETICAL_OCC: 18.75, M.BLOCK: 128.0, M.REGISTERS: 168.0, **limits})
    found = evaluate("low_occupancy", k)
    assert found.limiter == "registers" and "65,536 registers" in found.hint
    smaller = replace(k, metrics={**k.metrics, "device__attribute_max_registers_per_multiprocessor": 32768.0})
    assert "32,768 registers" in evaluate("low_occupancy", smaller).hint


def strided(line: str, **metrics: float) -> Kernel:
    """A kernel that wastes 80% of its L2 sectors, all on one source line."""
    base = {M.SECTORS_EXCESSIVE: 80.0, M.SECTORS_GLOBAL: 100.0, M.LTS_ACTIVE: 1.0, M.LTS_ELAPSED: 1.0, M.L2_PCT: 90.0}
    source = f"node = tl.load(start_ptr + pid)\nfor _ in range(8):\n    {line}\n"
    return replace(
        kernel(**base, **metrics),
        line_counters={"excessive_sectors": {("cell.py", 3): 80.0}},
        source_files={"cell.py": source},
    )


def test_uncoalesced_leaves_out_gathers_and_the_time_dram_still_needs():
    assert evaluate("uncoalesced_global", strided("x = tl.load(x_ptr + offs * 16)")).score == pytest.approx(0.8 * 0.9)
    assert evaluate("uncoalesced_global", strided("node = tl.load(next_ptr + node)")) is None  # a pointer chase
    # DRAM moves only the bytes a coalesced kernel would (20 ideal sectors), at 80% of the rate kernels reach
    # (91% of ncu's peak): 20% is left to win; at that rate itself, nothing
    near_roof = {M.DRAM_PCT: 0.8 * 91.0, M.DRAM_READ: 640.0, M.DRAM_WRITE: 0.0}
    assert evaluate("uncoalesced_global", strided("x = tl.load(x_ptr + offs * 2)", **near_roof)).score == pytest.approx(0.2)
    at_roof = strided("x = tl.load(x_ptr + offs * 2)", **{**near_roof, M.DRAM_PCT: 91.0})
    assert evaluate("uncoalesced_global", at_roof).score == pytest.approx(0.0)


def test_indirect_addresses_are_told_from_the_source():
    from kernel_lab.analysis.source import indirect, loaded_names

    cuda = "int c = col[k];\ns += x[col[k]];\ns += x[c];\ntile[ty][tx] = in[ty * n + tx];\n"
    names = loaded_names(cuda, triton=False)
    assert [indirect(line, names, triton=False) for line in cuda.splitlines()] == [False, True, True, False]
    triton = "idx = tl.load(idx_ptr + offs)\nv = tl.load(t_ptr + idx * D)\ntl.store(out_ptr + offs, v)\n"
    names = loaded_names(triton, triton=True)
    assert [indirect(line, names, triton=True) for line in triton.splitlines()] == [False, True, False]


def test_atomics_funnelled_onto_one_l2_slice_are_contention():
    red = {"lts__t_requests_srcunit_tex_op_red.sum": 1000.0}
    atom = {"lts__t_requests_srcunit_tex_op_atom_dot_alu.sum": 0.0, "lts__t_requests_srcunit_tex_op_atom_dot_cas.sum": 0.0}
    stalls = {f"{M.STALL_PREFIX}long_scoreboard{M.STALL_SUFFIX}": 95.0, f"{M.STALL_PREFIX}drain{M.STALL_SUFFIX}": 5.0}
    spread = kernel(**red, **atom, **stalls, **{M.ATOMIC_UNIT_MAX: 12.0, M.ATOMIC_UNIT_AVG: 10.0})
    assert evaluate("atomic_contention", spread) is None  # busy atomic units, evenly: throughput, not contention
    funnelled = kernel(**red, **atom, **stalls, **{M.ATOMIC_UNIT_MAX: 83.0, M.ATOMIC_UNIT_AVG: 1.0})
    assert evaluate("atomic_contention", funnelled).score == pytest.approx(0.82 * 0.83)  # near saturation: updates queue
    absorbed = kernel(**red, **atom, **stalls, **{M.ATOMIC_UNIT_MAX: 26.0, M.ATOMIC_UNIT_AVG: 0.3})
    assert evaluate("atomic_contention", absorbed) is None  # a quarter busy: updates absorbed as they come (5% of stalls)
    # a full memory-instruction queue is the volume of memory instructions: with the atomics spread, not contention
    queued = {f"{M.STALL_PREFIX}lg_throttle{M.STALL_SUFFIX}": 65.0, f"{M.STALL_PREFIX}long_scoreboard{M.STALL_SUFFIX}": 35.0}
    assert (
        evaluate("atomic_contention", kernel(**red, **atom, **queued, **{M.ATOMIC_UNIT_MAX: 26.5, M.ATOMIC_UNIT_AVG: 26.0}))
        is None
    )


def test_local_memory_in_a_latency_bound_kernel_costs_its_memory_waits():
    local = {
        M.SPILL_REQUESTS: 0.0,
        M.LOCAL_LD_REQUESTS: 3.0,
        M.LOCAL_ST_REQUESTS: 3.0,
        M.GLOBAL_LD_REQUESTS: 4.0,
        M.GLOBAL_ST_REQUESTS: 0.0,
        M.MEM_PCT: 30.0,
        M.SM_PCT: 2.0,
    }
    stalls = {f"{M.STALL_PREFIX}long_scoreboard{M.STALL_SUFFIX}": 60.0, f"{M.STALL_PREFIX}lg_throttle{M.STALL_SUFFIX}": 30.0}
    waits = kernel(**local, **stalls, **{f"{M.STALL_PREFIX}wait{M.STALL_SUFFIX}": 10.0})
    found = evaluate("register_spills", waits)
    assert found.score == pytest.approx(0.6 * 0.9) and "per-thread array" in found.summary


def test_more_warps_cannot_help_past_a_saturated_l2():
    limits = {
        M.OCCUPANCY_LIMITS[n]: b for n, b in (("registers", 6.0), ("shared_memory", 32.0), ("warps", 16.0), ("block_size", 32.0))
    }
    base = {M.THEORETICAL_OCC: 37.5, M.SM_PCT: 5.0, M.MEM_PCT: 50.0, **limits}
    assert evaluate("low_occupancy", kernel(**base)).score == pytest.approx(0.5)
    assert evaluate("low_occupancy", kernel(**base, **{M.L2_PCT: 90.0})).score == pytest.approx(0.1)


def test_a_limit_that_a_grid_of_less_than_one_wave_never_reaches_is_not_low_occupancy():
    """Held-out set 5: 512 blocks of 4 warps on 132 SMs (0.48 waves) were told 'registers allow only 8 blocks per SM'
    ahead of their memory bound, where each SM got about 4."""
    limits = {
        M.OCCUPANCY_LIMITS[n]: b for n, b in (("registers", 8.0), ("shared_memory", 16.0), ("warps", 16.0), ("block_size", 32.0))
    }
    base = {M.THEORETICAL_OCC: 50.0, M.SM_PCT: 15.0, M.MEM_PCT: 74.0, **limits}
    assert evaluate("low_occupancy", kernel(**base, **{M.WAVES: 1.9})).score > 0
    assert evaluate("low_occupancy", kernel(**base, **{M.WAVES: 0.48})) is None


def test_a_busy_tensor_pipe_leaves_less_to_occupancy_and_latency():
    """Hopper's SM throughput leaves the tensor pipe out: a flash-attention kernel at SM 38% with its tensor pipe
    52% busy (held-out set 2) was told low occupancy first, ahead of its tail."""
    limits = {
        M.OCCUPANCY_LIMITS[n]: b for n, b in (("registers", 1.0), ("shared_memory", 1.0), ("warps", 8.0), ("block_size", 32.0))
    }
    base = {M.THEORETICAL_OCC: 12.5, M.SM_PCT: 38.0, M.MEM_PCT: 33.0, **limits}
    pipes = {M.PIPE_PREFIX + name + M.PIPE_SUFFIX: 52.0 for name in ("shared", "tensor_op_hmma", "tensor")}
    assert evaluate("low_occupancy", kernel(**base)).score == pytest.approx(0.62)
    assert evaluate("low_occupancy", kernel(**base, **pipes)).score == pytest.approx(0.48)
    assert evaluate("latency_bound", kernel(**base)).score == pytest.approx(0.31)
    busy = evaluate("latency_bound", kernel(**base, **pipes))
    assert busy.score == pytest.approx(0.24) and "busiest pipe (tensor) is 52% busy" in busy.hint


# --- the ranking model --------------------------------------------------------------------------------


def test_regimes_keep_only_what_the_causes_leave_unexplained():
    strided = kernel(
        **{
            M.SM_PCT: 5.0,
            M.MEM_PCT: 90.0,
            M.SECTORS_EXCESSIVE: 80.0,
            M.SECTORS_GLOBAL: 100.0,
            M.LTS_ACTIVE: 1.0,
            M.LTS_ELAPSED: 1.0,
        }
    )
    scores = kinds(strided)
    assert list(scores) == ["uncoalesced_global", "memory_bound"]
    assert scores["uncoalesced_global"] == pytest.approx(0.8)
    assert scores["memory_bound"] == pytest.approx(0.3 * 0.9 * (1 - 0.8))


def test_a_launch_bound_kernel_scales_everything_inside_it():
    tiny = kernel(**{M.DURATION: 2000.0, M.SM_PCT: 10.0, M.MEM_PCT: 20.0})
    scores = kinds(tiny)
    launch = 5000 / (5000 + 2000)  # a call costs the launch plus the kernel
    assert next(iter(scores)) == "launch_overhead" and scores["launch_overhead"] == pytest.approx(launch)
    assert scores["latency_bound"] == pytest.approx(0.5 * 0.8 * (1 - launch) * (1 - launch))


def test_findings_under_two_percent_are_dropped():
    assert "tail_effect" not in kinds(kernel(**{M.WAVES: 10.5, M.GRID: 1000.0, M.SM_COUNT: 132.0}))


# --- bug 3: a rule that reads a metric the report lacks, or one it did not declare ----------------------


def test_memory_bound_without_the_unit_metrics_still_evaluates():
    found = evaluate("memory_bound", kernel(**{M.SM_PCT: 10.0, M.MEM_PCT: 80.0}))
    assert found is not None and "memory system" in found.summary


@pytest.fixture
def plugin(tmp_path, monkeypatch):
    """Install a package with entry points for real: a dist-info folder on sys.path (what pip writes)."""

    def install(name: str, entry_points: str, modules: dict[str, str]) -> None:
        for module, source in modules.items():
            (tmp_path / f"{module}.py").write_text(textwrap.dedent(source))
        info = tmp_path / f"{name}-1.0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
        (info / "entry_points.txt").write_text(textwrap.dedent(entry_points))
        monkeypatch.syspath_prepend(str(tmp_path))
        registry.rules.cache_clear()
        registry.regimes.cache_clear()
        registry.ncu_kinds.cache_clear()

    yield install
    for module in ("kl_plugin_rules", "kl_plugin_rewriter"):
        sys.modules.pop(module, None)
    registry.rules.cache_clear()
    registry.regimes.cache_clear()
    registry.ncu_kinds.cache_clear()


RULE_PLUGIN = """
    from kernel_lab import metrics as M
    from kernel_lab.models import Bottleneck

    KIND = "{kind}"
    NEEDS = ((M.DURATION,),)

    def evaluate(k):
        extra = k.get(M.SM_PCT) if {sneaky} else 0.0  # SM_PCT is not declared
        return Bottleneck(KIND, 0.5, "a team's own finding", "its hint", {{M.DURATION: k.value(M.DURATION)}})
"""


def test_a_rule_plugin_is_one_module_and_an_entry_point(plugin):
    plugin(
        "kl-rules",
        "[kernel_lab.rules]\nslow = kl_plugin_rules\n",
        {"kl_plugin_rules": RULE_PLUGIN.format(kind="team_slow", sneaky=False)},
    )
    assert "team_slow" in registry.kinds()
    assert kinds(kernel(**{M.DURATION: 1e6, **SOL}))["team_slow"] == pytest.approx(0.5)


def test_a_rule_reading_what_it_did_not_declare_is_not_evaluated_and_the_rest_goes_on(plugin):
    plugin(
        "kl-rules",
        "[kernel_lab.rules]\nslow = kl_plugin_rules\n",
        {"kl_plugin_rules": RULE_PLUGIN.format(kind="team_slow", sneaky=True)},
    )
    d = conductor.diagnose_kernel(kernel(**{M.DURATION: 1e6, **SOL}))
    assert "sm__throughput" in d.not_evaluated["team_slow"] and "does not declare" in d.not_evaluated["team_slow"]
    assert [b.kind for b in d.bottlenecks] == ["latency_bound"]


def test_a_broken_rule_plugin_is_named_in_one_line(plugin):
    plugin("kl-rules", "[kernel_lab.rules]\nslow = kl_plugin_rules\n", {"kl_plugin_rules": "KIND = 'Bad Kind'\nNEEDS = ()\n"})
    with pytest.raises(KernelLabError, match="Rule module kl_plugin_rules: KIND must be a lower_case id"):
        registry.rules()


REWRITER_PLUGIN = """
    from kernel_lab.rewrite.base import Candidate

    class Doubler:
        name = "doubler"
        cannot_fix = frozenset({"warp_divergence"})

        @classmethod
        def from_settings(cls, settings, say):
            return cls()

        def propose(self, context, n=1):
            return [Candidate(context.source + "\\n# doubled\\n", "doubled", "memory_bound", "doubler")]
"""


def test_a_rewriter_plugin_is_found_by_name_and_offered_by_the_cli(plugin):
    plugin(
        "kl-rewriter", "[kernel_lab.rewriters]\ndoubler = kl_plugin_rewriter:Doubler\n", {"kl_plugin_rewriter": REWRITER_PLUGIN}
    )
    assert available()["doubler"] == "kl_plugin_rewriter:Doubler"
    rewriter = make("doubler", Settings())
    assert rewriter.cannot_fix == {"warp_divergence"}
    from kernel_lab.cli import parser

    assert parser().parse_args(["optimize", "x.py", "--rewriter", "doubler"]).rewriter == "doubler"


def test_an_unknown_rewriter_lists_the_known_ones():
    with pytest.raises(KernelLabError, match=r"Unknown rewriter 'nope'\..*search, llm"):
        make("nope", Settings())
