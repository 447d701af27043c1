"""What ncu's console says, classified; and what is left when counters are refused (a torch.profiler trace)."""

from __future__ import annotations

import pytest

from kernel_lab import api, samples
from kernel_lab import metrics as M
from kernel_lab.profiling import ncu, report, trace
from kernel_lab.profiling.runner import cell_error

LOGS = samples.HERE / "logs"
TRACES = samples.HERE / "traces"
# NVIDIA's message for refused counters (https://developer.nvidia.com/ERR_NVGPUCTRPERM); root on the H100 cannot provoke it
REFUSED = (
    "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance Counters on the "
    "target device 0. For instructions on enabling permissions and to get more information see "
    "https://developer.nvidia.com/ERR_NVGPUCTRPERM\n"
)


@pytest.mark.parametrize("log", ["memory_bound.log", "shared_bank_conflicts.log", "register_spills.log"])
def test_progress_from_recorded_ncu_output(log):
    text = (LOGS / log).read_text()
    parser = ncu.ProgressParser()
    events = [e for i in range(0, len(text), 7) for e in parser.feed(text[i : i + 7])]
    assert events[-1].passes == 34 and events[-1].percent == 100 and events[-1].kernel in text
    percents = [e.percent for e in events]
    assert len(percents) >= 3 and percents == sorted(percents) and percents[0] < 50


def test_recorded_outcomes_are_classified():
    no_match = (LOGS / "no_kernel_matched.log").read_text()
    assert ncu.classify(0, no_match, "", report_written=False) == "no_kernels"
    assert ncu.kernels_available(no_match) == ["add_kernel"]
    failed = (LOGS / "cell_error.log").read_text()
    assert ncu.classify(3, failed, "", report_written=False) == "cell_error"
    err = cell_error(failed)
    assert "RuntimeError: mat1 and mat2 shapes cannot be multiplied" in str(err)
    assert "==PROF==" not in err.traceback and "line 10, in run" in err.traceback
    assert ncu.classify(0, (LOGS / "memory_bound.log").read_text(), "", report_written=True) == "ok"
    assert ncu.classify(1, "", REFUSED, report_written=False) == "counters_refused"


def test_without_counters_the_trace_still_gives_launch_hints():
    profile = trace.load(TRACES / "low_occupancy_registers.json", only={"chase_heavy_regs"})
    (d,) = api.analyze(profile).diagnoses
    assert d.bottlenecks[0].kind == "low_occupancy" and d.bottlenecks[0].limiter == "registers"
    assert "memory_bound" in d.not_evaluated and "shared_bank_conflicts" in d.not_evaluated
    assert any("counters were not available" in n for n in profile.notes)


def test_occupancy_calculator_agrees_with_nsight_compute():
    measured = report.load(samples.report("low_occupancy_registers")).kernels[0]
    computed = trace.load(TRACES / "low_occupancy_registers.json", only={"chase_heavy_regs"}).kernels[0]
    for metric in (
        M.REGISTERS,
        M.BLOCK,
        M.GRID,
        M.THEORETICAL_OCC,
        M.WAVES,
        M.OCCUPANCY_LIMITS["registers"],
        M.OCCUPANCY_LIMITS["warps"],
    ):
        assert computed.get(metric) == pytest.approx(measured.get(metric)), metric
    # the shared-memory limit depends on the carveout the driver picked, which a trace does not record;
    # the calculator assumes the largest, so it can only be as loose as ncu's, never tighter
    assert computed.get(M.OCCUPANCY_LIMITS["shared_memory"]) >= measured.get(M.OCCUPANCY_LIMITS["shared_memory"])


def test_small_grid_is_found_from_the_trace_alone():
    (d,) = api.analyze(trace.load(TRACES / "small_grid.json", only={"scale_small_grid_kernel"})).diagnoses
    assert d.bottlenecks[0].kind == "small_grid"


def test_gpu_missing_from_the_hardware_table_degrades_and_says_so():
    profile = trace.load(TRACES / "low_occupancy_registers.json", only={"chase_heavy_regs"}, architectures={})
    k = profile.kernels[0]
    assert not k.has(M.THEORETICAL_OCC) and k.has(M.DURATION, M.GRID)
    assert any("not in Kernel Lab's hardware table" in n for n in profile.notes)
    (d,) = api.analyze(profile).diagnoses
    assert "low_occupancy" in d.not_evaluated


def test_counters_refused_note_tells_how_to_enable_them():
    result = api.analyze(trace.load(TRACES / "memory_bound.json"))
    text = str(ncu.ENABLE_COUNTERS)
    assert "NVreg_RestrictProfilingToAdminUsers=0" in text
    assert "counters were not available" in str(result)
