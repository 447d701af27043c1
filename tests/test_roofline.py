"""Roofline numbers checked against the report's metrics by hand, and the chart and page as a browser shows them."""
from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from kernel_lab import api, samples
from kernel_lab.analysis.roofline import LEVELS, roofline
from kernel_lab.profiling import report
from conftest import run_python


def kernel(name):
    return report.load(samples.report(name)).kernels[0]


def test_vector_add_by_hand_and_near_the_dram_roof():
    k = kernel("memory_bound")
    m = k.metrics
    clock = m["smsp__cycles_elapsed.avg.per_second"]
    flops = (
        m["smsp__sass_thread_inst_executed_op_fadd_pred_on.sum.per_cycle_elapsed"]
        + m["smsp__sass_thread_inst_executed_op_fmul_pred_on.sum.per_cycle_elapsed"]
        + 2 * m["smsp__sass_thread_inst_executed_op_ffma_pred_on.sum.per_cycle_elapsed"]
    ) * clock
    dram = m["dram__bytes.sum.per_second"]
    dram_peak = m["dram__bytes.sum.peak_sustained"] * m["dram__cycles_elapsed.avg.per_second"]
    r = roofline(k)
    assert r.precision == "FP32"
    assert r.flop_rate == pytest.approx(flops)
    assert r.intensity("DRAM") == pytest.approx(flops / dram)
    # one add per 12 bytes (two fp32 loads, one store)
    assert r.intensity("DRAM") == pytest.approx(1 / 12, rel=0.15)
    assert r.memory["DRAM"].value == pytest.approx(dram_peak) and r.memory["DRAM"].source == "report"
    share = flops / (flops / dram * dram_peak)
    assert r.label() == f"at {share:.0%} of the DRAM roof"
    assert share >= 0.75


def test_bf16_gemm_lands_under_the_tensor_roof():
    k = kernel("bf16_gemm")
    r = roofline(k)
    assert r.precision == "Tensor BF16/FP16"
    ops = sum(v for n, v in k.metrics.items() if n.startswith("sm__ops_path_tensor_op_h") and n.endswith("sparsity_off.sum") and ("bf16" in n or "fp16" in n))
    assert r.flop_rate == pytest.approx(ops / (k.metrics["gpu__time_duration.sum"] * 1e-9))
    attainable, roof = r.attainable("DRAM")
    assert roof == "Tensor BF16/FP16"
    assert r.flop_rate / attainable >= 0.5


def test_a_kernel_without_roofline_metrics_gets_a_note_not_a_point():
    from kernel_lab.profiling import trace

    k = trace.load(samples.HERE / "traces" / "memory_bound.json").kernels[0]
    r = roofline(k)
    assert r.flop_rate == 0 and r.label() == "no roofline metrics in this report"
    assert any("memory-throughput" in n for n in r.notes)


def test_compare_the_bank_conflict_fix():
    c = api.compare(samples.report("shared_bank_conflicts"), samples.report("transpose_padded"))
    assert c.speedup > 1.2
    assert "shared_bank_conflicts" in c.disappeared
    assert c.changes[0].metric.startswith("l1tex__data_bank_conflicts") or any(
        m.metric.startswith("l1tex__data_bank_conflicts") and m.change < -0.9 for m in c.changes
    )
    assert "Bottlenecks gone" in c._repr_html_()


def chromium():
    return shutil.which("chromium") or shutil.which("chromium-browser")


HEADLESS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync", "--virtual-time-budget=8000"]


@pytest.mark.skipif(not chromium(), reason="Chromium not installed (scripts/setup.sh installs it)")
def test_html_page_renders_the_roofline_in_a_browser(tmp_path):
    page = tmp_path / "diag.html"
    proc = run_python("-m", "kernel_lab.cli", "diagnose", str(samples.report("bf16_gemm")), "--html", str(page))
    assert proc.returncode == 0, proc.stderr
    profile = tmp_path / "chrome"
    shot = tmp_path / "shot.png"
    subprocess.run([chromium(), *HEADLESS, f"--user-data-dir={profile}", "--window-size=1100,1400", f"--screenshot={shot}", page.as_uri()],
                   capture_output=True, timeout=120, check=True)
    assert shot.stat().st_size > 20_000
    dom = subprocess.run([chromium(), *HEADLESS, f"--user-data-dir={profile}", "--dump-dom", page.as_uri()],
                         capture_output=True, text=True, timeout=120, check=True).stdout
    r = api.diagnose(samples.report("bf16_gemm")).rooflines[0]
    expected = sum(1 for level in LEVELS if r.intensity(level))
    assert len(re.findall(r'class="point"', dom)) == expected  # one marker per memory level
    assert "at " in dom and "roof" in dom


def test_labels_of_close_kernels_do_not_overlap():
    from kernel_lab.display.roofline import _label_places

    labels = ["example_block256 (add_kernel)<br>at 92% of the DRAM roof"] * 4
    close = [(0.083, 0.28), (0.085, 0.29), (0.18, 0.55), (0.4, 0.8)]  # two almost on top of each other
    places = _label_places(close, labels, (0.01, 400.0), (0.03, 1400.0))
    assert places[0] == "top center" and places[1] != "top center"  # the second one moves, or goes unlabelled
    far = [(0.01 * 100**i, 0.1) for i in range(3)]  # two decades apart: room for every label above its point
    assert _label_places(far, labels[:3], (0.01, 400.0), (0.03, 1400.0)) == ["top center"] * 3


def test_the_chart_names_each_labelled_kernel_once_and_every_kernel_on_hover():
    from kernel_lab.display.roofline import figure

    names = ("memory_bound", "launch_overhead", "low_occupancy_shared", "low_occupancy_registers", "small_grid", "bf16_gemm")
    points = [roofline(k) for name in names for k in report.load(samples.report(name)).kernels]
    (dram,) = [t for t in figure(points).data if t.name == "kernels (DRAM intensity)"]
    assert len(dram.hovertext) == len(points) and all(dram.hovertext)  # every kernel says what it is on hover
    shown = [t for t in dram.text if t]
    assert 1 <= len(shown) < len(points) and len(set(shown)) == len(shown)  # crowded points: some go unlabelled
