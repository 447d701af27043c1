"""``kernel-lab bench-rewriter``: the loop with the LLM rewriter over a folder of cells, KernelBench style; here on the
CPU against the stand-in server (which says so first)."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import pytest
from conftest import run_python
from openai_server import OpenAIServer

from kernel_lab import samples
from kernel_lab.rewriter_bench import CPU_LINE, Bench, Row, naive_cells

CELLS = Path(__file__).resolve().parent / "cells"


def test_the_table_fits_100_columns_and_sums_up_kernelbench_style():
    rows = (
        Row("01_roofline/naive.py", True, 2.5, None, 12_000, 0.02),
        Row("02_coalescing/naive.py", True, 1.5, 0.8, 9_000, 0.01),
        Row("07_reductions/naive.py", False, 1.0, None, 20_000, 0.04),
        Row("03_bank_conflicts/naive.py", skipped="a CUDA cell needs a GPU"),
    )
    text = Bench(rows, cpu=True, model="some-model").text()
    lines = text.splitlines()
    assert lines[0] == CPU_LINE and all(len(line) <= 100 for line in lines)
    assert "correct 67% · fast_1 67% · fast_2 33% of 3 cell(s)" in text  # the skipped cell is not counted
    assert f"over the original {math.exp((math.log(2.5) + math.log(1.5)) / 3):.2f}x" in text
    assert "over torch.compile 0.80x" in text and "tokens per kernel 13,667" in text and "$0.023" in text
    assert "skipped: a CUDA cell needs a GPU" in text


def test_the_default_cells_are_the_courses_naive_kernels():
    found = naive_cells()
    assert len(found) == 10 and all(p.name == "naive.py" for p in found)


@pytest.mark.slow
def test_bench_rewriter_runs_the_loop_over_a_folder_against_a_local_server(tmp_path):
    folder = tmp_path / "cells"
    folder.mkdir()
    shutil.copy(CELLS / "slow_ref.py", folder / "slow.py")
    shutil.copy(samples.report("memory_bound"), folder / "slow.ncu-rep")  # replayed on the CPU
    shutil.copy(samples.cell("shared_bank_conflicts"), folder / "cuda.py")
    fast = (CELLS / "slow_ref.py").read_text().replace("    time.sleep(0.04)\n", "")
    with OpenAIServer(policy=lambda messages: f"```python\n{fast}```\nDropped the sleep (memory_bound).") as server:
        proc = run_python(
            "-m",
            "kernel_lab.cli",
            "bench-rewriter",
            "--model",
            "test-model",
            "--base-url",
            server.base_url,
            "--cells",
            str(folder),
            "--llm-workers",
            "1",
            "--llm-turns",
            "1",
            "--screen",
            "0",
            "--root",
            str(tmp_path / "sessions"),
            env={"OPENAI_API_KEY": ""},
        )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.splitlines()[0] == CPU_LINE
    lines = proc.stdout.splitlines()
    assert lines[0] == CPU_LINE and all(len(line) <= 100 for line in lines)
    assert "skipped: a CUDA cell needs a GPU" in next(line for line in lines if line.startswith("cells/cuda.py"))
    slow = next(line for line in lines if line.startswith("cells/slow.py")).split()
    assert slow[1] == "yes" and float(slow[2].rstrip("x")) > 2  # the sleep was most of the reference's time
    assert "correct 100% · fast_1 100% · fast_2 100% of 1 cell(s)" in proc.stdout


@pytest.mark.slow
def test_a_cells_torch_reference_is_timed_compiled_beside_the_best_version():
    from kernel_lab.rewriter_bench import REFERENCE, _over_compile
    from kernel_lab.settings import Settings

    cell = (CELLS / "add_ref.py").read_text() + "\n\ndef torch_reference(x, y):\n    return x + y\n"
    assert REFERENCE.search(cell)
    over = _over_compile(cell, cell, Settings.resolve())  # the original itself against torch.compile of x + y
    assert over is not None and 0 < over < math.inf
