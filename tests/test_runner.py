"""The cell runner, executed for real on the CPU with Triton's interpreter."""

from __future__ import annotations

import subprocess
import sys
from textwrap import dedent

import pytest
from conftest import run_python

from kernel_lab.profiling.runner import MARK

pytestmark = pytest.mark.slow  # every test starts the profiling runner

pytest.importorskip("triton")

KERNEL = """
import torch, triton, triton.language as tl

@triton.jit
def add_kernel(x, y, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out + offs, tl.load(x + offs, mask=m) + tl.load(y + offs, mask=m), mask=m)
"""
INTERPRET = {"TRITON_INTERPRET": "1"}


def phases(stdout: str) -> list[str]:
    return [line.split(" ", 1)[1] for line in stdout.splitlines() if line.startswith("==KERNEL_LAB==")]


def test_conventional_cell_warms_up_then_runs_once_in_range(tmp_path):
    cell = tmp_path / "cell.py"
    cell.write_text(
        KERNEL
        + dedent("""
        CALLS = []
        def make_inputs():
            return torch.randn(1000), torch.randn(1000)
        def run(x, y):
            out = torch.empty_like(x)
            add_kernel[(triton.cdiv(x.numel(), 256),)](x, y, out, x.numel(), BLOCK=256)
            assert torch.allclose(out, x + y)
            CALLS.append(1)
            print("run call", len(CALLS))
            return out
    """)
    )
    proc = run_python("-m", "kernel_lab.profiling.runner", str(cell), env=INTERPRET)
    assert proc.returncode == 0, proc.stderr
    assert phases(proc.stdout) == ["warm-up", "profile", "done"]
    # one warm-up call before the range, one call inside it
    assert proc.stdout.index("run call 1") < proc.stdout.index("==KERNEL_LAB== profile") < proc.stdout.index("run call 2")


def test_plain_cell_runs_twice_and_prints_once(tmp_path):
    cell = tmp_path / "cell.py"
    cell.write_text(
        KERNEL
        + dedent("""
        x = torch.randn(300); y = torch.randn(300); out = torch.empty_like(x)
        add_kernel[(2,)](x, y, out, 300, BLOCK=256)
        print("ok", bool(torch.allclose(out, x + y)))
    """)
    )
    proc = run_python("-m", "kernel_lab.profiling.runner", str(cell), env=INTERPRET)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("ok True") == 1


def test_cell_error_shows_the_users_traceback_only(tmp_path):
    cell = tmp_path / "cell.py"
    cell.write_text("x = 1\n\ndef f():\n    return x / 0\n\nf()\n")
    proc = run_python("-m", "kernel_lab.profiling.runner", str(cell))
    assert proc.returncode == 3
    assert "cell-error" in proc.stdout
    assert f'File "{cell}", line 4, in f' in proc.stderr
    assert "ZeroDivisionError" in proc.stderr
    assert "runner.py" not in proc.stderr


def test_syntax_error_is_reported_with_the_cell_line(tmp_path):
    cell = tmp_path / "cell.py"
    cell.write_text("a = 1\nb = (2\n")
    proc = run_python("-m", "kernel_lab.profiling.runner", str(cell))
    assert proc.returncode == 3
    assert "SyntaxError" in proc.stderr and "runner.py" not in proc.stderr
    assert f'File "{cell}", line 2' in proc.stderr


def test_a_runner_started_ahead_ends_unused_when_the_process_that_started_it_is_gone(tmp_path):
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    command = [
        sys.executable,
        "-m",
        "kernel_lab.profiling.runner",
        "--wait-for",
        str(tmp_path / "never"),
        "--owner",
        str(gone.pid),
    ]
    done = subprocess.run(command, check=False, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and f"{MARK} ready" in done.stdout and "warm-up" not in done.stdout


def test_the_profiled_run_is_recorded_launch_by_launch_with_its_tensors(tmp_path):
    from kernel_lab.profiling.launches import load

    cell = tmp_path / "cell.py"
    cell.write_text(
        KERNEL
        + dedent("""
        def make_inputs():
            return torch.randn(1000), torch.randn(1000)
        def run(x, y):
            out = torch.empty_like(x)
            grid = lambda meta: (triton.cdiv(x.numel(), meta["BLOCK"]),)
            add_kernel[grid](x, y, out, x.numel(), BLOCK=256)
            twice = torch.empty_like(x)
            add_kernel[(4,)](out, y, twice, x.numel(), BLOCK=256, num_warps=2)
            return twice
    """)
    )
    record = tmp_path / "profile.launches.json"
    proc = run_python("-m", "kernel_lab.profiling.runner", str(cell), "--record", str(record), env=INTERPRET)
    assert proc.returncode == 0, proc.stderr
    got = load(record)
    assert got is not None and [x.kernel for x in got.launches] == ["add_kernel", "add_kernel"]  # the profiled run's only
    first, second = got.launches
    assert first.grid == (4,) and dict(first.args)["BLOCK"] == 256 and dict(second.args)["num_warps"] == 2
    assert [t.shape for t in got.inputs] == [(1000,), (1000,)] and got.outputs[0].dtype == "float32"
    # the first launch's output is the second's input: one storage
    assert first.tensors()["out"].storage == second.tensors()["x"].storage == second.tensors()["x"].storage
    assert second.tensors()["out"].storage == got.outputs[0].storage and got.outputs[0].nbytes == 4000


def test_the_trace_profiler_records_the_cells_launches_beside_its_trace(tmp_path, monkeypatch):
    """The fall-back when counters are refused: its profile carries the launch record, as ncu's does, so that the
    whole-cell reading (with its gaps measured from the trace) and lifting work on it."""
    from kernel_lab.cells import CellSource
    from kernel_lab.profiling.trace import TraceProfiler
    from kernel_lab.settings import Settings

    monkeypatch.setenv("TRITON_INTERPRET", "1")
    cell = KERNEL + dedent("""
        def make_inputs():
            return torch.randn(1000), torch.randn(1000)
        def run(x, y):
            out = torch.empty_like(x)
            add_kernel[(triton.cdiv(x.numel(), 256),)](x, y, out, x.numel(), BLOCK=256)
            return out
    """)
    profile = TraceProfiler().collect(CellSource(cell), Settings(), output=tmp_path / "profile.ncu-rep")
    assert profile.record is not None
    (launch,) = profile.record.launches  # the profiled call's, not the warm-up's
    assert (launch.kernel, launch.grid, dict(launch.args)["BLOCK"]) == ("add_kernel", (4,), 256)
