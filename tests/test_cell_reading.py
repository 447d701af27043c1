"""The whole cell's reading (analysis/cell.py, flow.py, fusion.py, gaps.py) on cells recorded on the H200 with their
launch records (tests/data/h200): the least traffic against what the kernels moved, the tensors launches share and
the fusion that keeps them on chip, the gaps, and how it is shown (text, HTML, JSON, the LLM's prompt)."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

import kernel_lab
from kernel_lab import metrics as M
from kernel_lab import samples
from kernel_lab.analysis import cell, gaps
from kernel_lab.display.text import WIDTH
from kernel_lab.results.profile import Result

CORPUS = [e["name"] for e in json.loads((Path(__file__).parent / "cells" / "corpus" / "index.json").read_text())]


def reading(h200, name: str):
    result = kernel_lab.diagnose(h200(name))
    assert result.cell is not None
    return result, result.cell


def test_the_three_pass_softmax_reads_its_input_three_times_and_fusion_comes_first(h200):
    result, r = reading(h200, "softmax_three_pass")
    x = 8192 * 4096 * 4
    assert r.launches == 3 and r.least_bytes == 2 * x  # x read once, the output written once
    moved = sum(k.value(M.DRAM_READ) + k.value(M.DRAM_WRITE) for k in result.profile.kernels)
    assert r.moved_bytes == moved and 1.8 < r.ratio < 2.0
    first = r.shared[0]
    assert (first.name, first.role, first.uses) == ("x_ptr", "input", ((0, "read"), (1, "read"), (2, "read")))
    assert first.saved_bytes == 2 * x  # the second and third reads
    roles = {s.name: (s.role, s.uses) for s in r.shared}
    assert roles["max_ptr"] == ("intermediate", ((0, "write"), (1, "read"), (2, "read")))
    assert roles["sum_ptr"] == ("intermediate", ((1, "write"), (2, "read")))
    top = r.findings[0]
    # two of the three reads of x, about half the DRAM time of three kernels near their roof
    assert top.kind == "fusion" and 0.3 < top.score < 0.55 and "x_ptr" in top.summary
    assert r.least_ns is not None and r.kernel_ns > 2 * r.least_ns


def test_a_layernorm_in_two_kernels_rereads_x_and_round_trips_its_statistics(h200):
    _, r = reading(h200, "layernorm_two_kernels")
    roles = {s.name: s.role for s in r.shared}
    assert roles == {"x_ptr": "input", "mean_ptr": "intermediate", "rstd_ptr": "intermediate"}
    assert r.findings[0].kind == "fusion" and r.shared[0].saved_bytes == 16384 * 2048 * 4


def test_an_elementwise_chain_writes_an_intermediate_that_a_fused_kernel_keeps(h200):
    _, r = reading(h200, "bias_gelu_chain")
    (biased,) = r.shared
    assert biased.role == "intermediate" and biased.uses == ((0, "write"), (1, "read"))
    assert biased.saved_bytes == 2 * 8192 * 8192 * 4 and r.findings[0].kind == "fusion"


def test_many_tiny_launches_are_told_their_gaps_estimated_not_measured(h200):
    result, r = reading(h200, "many_tiny_adds")
    assert r.launches == 64 and r.profiled == 64 and r.gaps.how == "estimated"
    assert r.findings[0].kind == "launch_overhead" and 0.3 < r.findings[0].score < 0.8
    assert "estimated" in r.gaps.said and "not measured" not in r.gaps.said.split("(")[0]
    (out,) = r.shared  # read and written by every launch, first made by x.clone(): no saving claimed
    assert out.role == "output" and out.saved_bytes == 0 and "torch operation" in out.note
    assert all(d.bottlenecks[0].kind == "launch_overhead" for d in result.diagnoses)  # per kernel, as before


@pytest.mark.parametrize(
    "name", ["softmax_fused", "matmul_broadcast_sum", "sum_atomic_per_element", "transpose_strided_reads", *CORPUS]
)
def test_no_fusion_is_claimed_where_one_kernel_runs_or_where_the_bytes_show_no_excess(h200, name):
    _, r = reading(h200, name)
    assert "fusion" not in [b.kind for b in r.findings], name
    if r.launches == 1:
        assert not r.shared and not r.findings and r.gaps.how == "not measured"


def test_launches_writing_parts_of_one_output_are_not_told_to_fuse(h200):
    _, r = reading(h200, "flaggems_cat")  # two launches, one output: each writes its own slices
    (out,) = r.shared
    assert out.role == "output" and out.saved_bytes > 0  # the record cannot tell the parts apart...
    assert 0.95 < r.ratio < 1.05 and not r.findings  # ...the measured bytes can: no excess, no claim


def test_the_reading_counts_only_the_profiled_launches_and_says_so(h200):
    result = kernel_lab.diagnose(h200("many_tiny_adds"))
    cut = replace(result.profile, kernels=result.profile.kernels[:20])
    r = Result(cut, tuple(result.diagnoses[:20])).cell
    assert r is not None and r.launches == 64 and r.profiled == 20 and r.ratio is None
    assert any("44 of the 64 launches were not profiled" in n for n in r.notes)


def test_reports_without_a_launch_record_have_no_cell_reading():
    result = kernel_lab.diagnose(samples.report("memory_bound"))
    assert result.profile.record is None and result.cell is None
    assert "Whole cell" not in str(result) and "cell" not in json.loads(result.to_json())[0]


# --- gaps -----------------------------------------------------------------------------------------------------------


def test_gaps_from_a_trace_are_the_wall_time_outside_the_union_of_kernels():
    events = [  # a synthetic trace: host work from 0 to 40 µs, kernels at 5-15 and 12-20 (overlapping) and 30-35
        {"ph": "X", "cat": "cpu_op", "ts": 0, "dur": 40},
        {"ph": "X", "cat": "kernel", "ts": 5, "dur": 10},
        {"ph": "X", "cat": "kernel", "ts": 12, "dur": 8},
        {"ph": "X", "cat": "kernel", "ts": 30, "dur": 5},
        {"ph": "i", "cat": "kernel", "ts": 100},  # not a complete event
    ]
    g = gaps.from_events(events)
    assert g is not None and g.how == "measured" and g.wall_ns == 40_000 and g.gap_ns == 20_000 and g.share == 0.5
    assert gaps.from_events([{"ph": "X", "cat": "cpu_op", "ts": 0, "dur": 5}]) is None


def test_a_trace_beside_the_report_measures_the_gaps(h200, tmp_path):
    for suffix in (".ncu-rep", ".launches.json"):
        shutil.copy(h200("softmax_three_pass").with_suffix(suffix), tmp_path / f"cell{suffix}")
    start = [0.0, 40.0, 80.0]  # synthetic: three kernels of 33, 33 and 65 µs with host time between them
    events = [{"ph": "X", "cat": "kernel", "ts": t, "dur": d} for t, d in zip(start, (33.0, 33.0, 65.0))]
    (tmp_path / "cell.trace.json").write_text(json.dumps({"traceEvents": events}))
    r = kernel_lab.diagnose(tmp_path / "cell.ncu-rep").cell
    assert r is not None and r.gaps.how == "measured" and r.gaps.gap_ns == pytest.approx(14_000)
    assert "launch_overhead" in [b.kind for b in r.findings]


def test_without_a_trace_long_launches_are_said_not_measured_with_how_to_measure(h200):
    _, r = reading(h200, "softmax_three_pass")
    assert r.gaps.how == "not measured" and r.gaps.share is None and "--trace" in r.gaps.said
    assert "launch_overhead" not in [b.kind for b in r.findings]


# --- how it is shown ------------------------------------------------------------------------------------------------


def test_the_text_output_says_the_whole_cell_before_its_kernels_in_100_columns(h200):
    result, _ = reading(h200, "softmax_three_pass")
    text = str(result)
    assert text.index("Whole cell: 3 launches moved") < text.index("row_max_kernel  ")
    assert "[fusion]" in text and max(len(line) for line in text.splitlines()) <= WIDTH


def test_the_dashboard_shows_the_cell_above_the_kernel_table(h200):
    result, _ = reading(h200, "softmax_three_pass")
    page = result._repr_html_()
    assert page.index("<div class='cell'>Whole cell:") < page.index("<table class='summary'>")
    assert "fusion" in page


def test_the_json_gains_the_cell_in_its_first_entry_and_keeps_its_shape(h200):
    result, r = reading(h200, "layernorm_two_kernels")
    data = json.loads(result.to_json())
    assert isinstance(data, list) and [k["kernel"] for k in data] == ["stats_kernel", "apply_kernel"]
    plain = [d.to_dict() for d in result.diagnoses]  # the JSON of before
    assert data[1] == json.loads(json.dumps(plain[1])) and {k: v for k, v in data[0].items() if k != "cell"} == json.loads(
        json.dumps(plain[0])
    )
    c = data[0]["cell"]
    assert c["least_bytes"] == r.least_bytes and c["findings"][0]["kind"] == "fusion"
    assert {s["name"] for s in c["shared"]} == {"x_ptr", "mean_ptr", "rstd_ptr"} and c["gaps"]["how"] == "not measured"


def test_the_prompt_section_and_the_round_summary_carry_the_reading(h200):
    _, r = reading(h200, "softmax_three_pass")
    section = cell.prompt_section(r)
    assert section.startswith("## The whole cell") and "1.9×" in section and "`fusion`" in section and "x_ptr" in section
    line = cell.summary_line(r)
    assert "\n" not in line and line.startswith("cell: 3 launches, 1.9× its least traffic") and "fusion" in line


class Nothing:
    """A rewriter (the plug-in protocol) with no idea: the round ends after its diagnosis."""

    name = "nothing"
    cannot_fix = frozenset()

    def propose(self, context, n=1):
        return []


@pytest.mark.slow
def test_each_round_of_optimize_says_the_whole_cells_reading(h200, tmp_path):
    cells = Path(__file__).parent / "cells" / "whole"
    small = tmp_path / "softmax_three_pass.py"  # the recorded cell, made small enough for the interpreter
    small.write_text((cells / "softmax_three_pass.py").read_text().replace("rows=8192, cols=4096", "rows=8, cols=128"))
    events = []
    kernel_lab.optimize(
        small, rounds=1, root=tmp_path, replay=h200("softmax_three_pass"), rewriter=Nothing(), on_event=events.append
    )
    notes = [e.message for e in events if e.state == "note"]
    assert any(n.startswith("round 1: cell: 3 launches, 1.9× its least traffic") and "fusion" in n for n in notes), notes
