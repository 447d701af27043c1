"""Reading recorded reports with ncu_report, and refusing broken ones clearly."""

from __future__ import annotations

import pytest

from kernel_lab import metrics as M
from kernel_lab import samples
from kernel_lab.errors import ReportError
from kernel_lab.profiling import ncu, report


@pytest.mark.parametrize("name", samples.names())
def test_every_sample_loads_with_the_metrics_the_conductor_reads(name):
    profile = report.load(samples.report(name))
    assert profile.replay and len(profile.kernels) >= 1
    expected = set(ncu.kernel_names(samples.cell(name).read_text()))
    for k in profile.kernels:
        assert k.name in expected
        assert k.has(M.DURATION, M.SM_PCT, M.MEM_PCT, M.THEORETICAL_OCC, M.GRID, M.BLOCK, M.REGISTERS)
        assert k.device.startswith("NVIDIA H100")
        assert k.rules, "Nsight Compute's rule results were recorded"


def test_source_lines_map_back_to_the_cell_with_their_text():
    k = report.load(samples.report("uncoalesced_global")).kernels[0]
    lines = k.line_counters["excessive_sectors"]
    (file, line), _ = max(lines.items(), key=lambda item: item[1])
    assert file.endswith("uncoalesced_global.py")
    assert "tl.load" in k.source_files[file].splitlines()[line - 1]


def test_missing_report(tmp_path):
    with pytest.raises(ReportError, match="No report at"):
        report.load(tmp_path / "nope.ncu-rep")


def test_a_file_that_is_not_a_report(tmp_path):
    bad = tmp_path / "notes.ncu-rep"
    bad.write_text("hello")
    with pytest.raises(ReportError, match="not an Nsight Compute report"):
        report.load(bad)


@pytest.mark.parametrize("keep", [1000, 0.5])
def test_truncated_reports_are_refused_not_misread(tmp_path, keep):
    data = samples.report("memory_bound").read_bytes()
    cut = tmp_path / "cut.ncu-rep"
    cut.write_bytes(data[: keep if isinstance(keep, int) else int(len(data) * keep)])
    with pytest.raises(ReportError, match="truncated"):
        report.load(cut)


def test_markup_is_stripped_from_rule_messages():
    text = "See @section:LaunchStats:Launch Statistics@ and @url:fused:https://docs.nvidia.com/x@ at @source:/k.py:5:line 5@."
    assert report.plain(text) == "See Launch Statistics and fused at line 5."


def test_no_occupancy_limiter_is_named_at_full_theoretical_occupancy():
    import kernel_lab
    from kernel_lab.results.tables import occupancy_limiter

    full = kernel_lab.diagnose(samples.report("memory_bound")).profile.kernels[0]
    capped = kernel_lab.diagnose(samples.report("low_occupancy_registers")).profile.kernels[0]
    assert (occupancy_limiter(full), occupancy_limiter(capped)) == (None, "registers")
