"""Bad input gets one line that says what happened and what to do: from the CLI on stderr with exit code 2, in a
notebook as one error line; never a traceback of Kernel Lab's (issue 16, "Errors that are not one line")."""

from __future__ import annotations

import nbformat
import pytest
from conftest import ROOT, has_gpu, run_python
from test_notebook import execute, outputs

from kernel_lab import samples

pytestmark = pytest.mark.slow  # every test runs the CLI or a notebook kernel

SYNTAX_ERROR = "import torch\n\ndef run(x:\n    return x\n"
NO_CONVENTION = "import torch\n\nx = torch.ones(4)\nprint(x + x)\n"
ON_CUDA = "import torch\n\ndef make_inputs():\n    return (torch.ones(4, device='cuda'),)\n\ndef run(x):\n    return x + 1\n"
no_gpu = pytest.mark.skipif(has_gpu(), reason="checks what is said where there is no GPU")


def fails_with(line: str, *args: str, cwd=None, env=None) -> None:
    """``kernel-lab ARGS`` prints exactly ``kernel-lab: LINE`` on stderr, nothing else, and exits with 2."""
    proc = run_python("-m", "kernel_lab.cli", *args, cwd=cwd, env=env)
    assert (proc.returncode, proc.stderr) == (2, f"kernel-lab: {line}\n"), proc.stdout + proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr


@pytest.mark.parametrize("command", ["optimize", "profile"])
def test_a_syntax_error_is_one_line_with_its_line_number(tmp_path, command):
    (tmp_path / "bad.py").write_text(SYNTAX_ERROR)
    replay = ["--replay", str(samples.report("memory_bound"))] if command == "optimize" else []
    fails_with(
        "bad.py line 3: syntax error ('(' was never closed). Fix the cell and run it again.",
        command,
        "bad.py",
        *replay,
        cwd=tmp_path,
    )


@pytest.mark.parametrize("command", ["optimize", "profile"])
def test_a_missing_cell_file_says_no_such_file(tmp_path, command):
    fails_with("No such file: nosuch.py. Check the path (relative to the current directory).", command, "nosuch.py", cwd=tmp_path)


def test_a_folder_is_neither_a_cell_nor_a_report(tmp_path):
    (tmp_path / "runs").mkdir()
    fails_with("runs is a directory, not a cell. Give the cell's .py file.", "optimize", "runs", cwd=tmp_path)
    fails_with(
        "runs is a directory, not a report. Give the path of a .ncu-rep file (or of a torch.profiler .json trace).",
        "diagnose",
        "runs",
        cwd=tmp_path,
    )


def test_a_json_file_that_is_not_a_trace_is_refused(tmp_path):
    (tmp_path / "settings.json").write_text('{"theme": "dark"}')
    fails_with(
        "settings.json is not a torch.profiler trace (it has no traceEvents). Give a trace written by "
        "torch.profiler's export_chrome_trace, or a .ncu-rep report.",
        "diagnose",
        "settings.json",
        cwd=tmp_path,
    )


def test_a_cell_without_the_convention_is_told_what_to_add(tmp_path):
    (tmp_path / "plain.py").write_text(NO_CONVENTION)
    fails_with(
        "plain.py defines no make_inputs() and no run(*inputs), so its versions cannot be checked or timed. A "
        "cell to optimize defines make_inputs(), which returns the kernel's inputs, and run(*inputs), which "
        "launches the kernel and returns its output.",
        "optimize",
        "plain.py",
        "--replay",
        str(samples.report("memory_bound")),
        cwd=tmp_path,
    )


@no_gpu
def test_cells_that_cannot_run_without_a_gpu_are_told_so_at_once(tmp_path):
    cuda = samples.cell("shared_bank_conflicts")
    fails_with(
        "shared_bank_conflicts.py has CUDA C++ kernels, which need an NVIDIA GPU: there is none here, so no "
        "version can be checked. Optimize it on a GPU machine (without one, only Triton cells run, on Triton's "
        "CPU interpreter).",
        "optimize",
        str(cuda),
        "--replay",
        str(samples.report("shared_bank_conflicts")),
    )
    fails_with(
        "bf16_gemm.py uses bfloat16, which Triton's CPU interpreter computes wrongly (on the raw bits): there is "
        "no GPU here, so no version can be checked. Optimize it on a GPU machine.",
        "optimize",
        str(samples.cell("bf16_gemm")),
        "--replay",
        str(samples.report("bf16_gemm")),
    )
    (tmp_path / "pinned.py").write_text(ON_CUDA)
    fails_with(
        'pinned.py puts its tensors on "cuda" and there is no GPU here, so no version can be checked. Choose the '
        'device in the cell (DEVICE = "cuda" if torch.cuda.is_available() else "cpu": the CPU runs Triton\'s '
        "interpreter), or optimize it on a GPU machine.",
        "optimize",
        "pinned.py",
        "--replay",
        str(samples.report("memory_bound")),
        cwd=tmp_path,
    )


def test_a_triton_sample_is_verified_in_replay_mode_and_says_its_notes_once(tmp_path):
    proc = run_python(
        "-m",
        "kernel_lab.cli",
        "optimize",
        str(samples.cell("memory_bound")),
        "--replay",
        str(samples.report("memory_bound")),
        "--rounds",
        "1",
        "--candidates",
        "1",
        "--root",
        str(tmp_path),
    )
    assert proc.returncode == 0, proc.stderr
    assert "v001 correct" in proc.stderr and "Torch not compiled with CUDA" not in proc.stdout + proc.stderr
    said = proc.stdout + proc.stderr
    assert said.count("Replay mode: the diagnosis comes from") == 1
    assert said.count("No GPU: candidates were checked") == (0 if has_gpu() else 1)


def test_the_cli_names_its_own_options_when_no_model_is_configured(tmp_path):
    env = {"KERNEL_LAB_MODEL": "", "OPENAI_API_KEY": ""}
    fails_with(
        "No model configured: give --model NAME (model= from Python) or set KERNEL_LAB_MODEL",
        "optimize",
        str(ROOT / "tests" / "cells" / "add_ref.py"),
        "--rewriter",
        "llm",
        "--replay",
        str(samples.report("memory_bound")),
        "--root",
        str(tmp_path),
        env=env,
    )


def test_an_ncu_report_too_old_to_read_says_what_to_install(tmp_path):
    fake = tmp_path / "site"
    (fake / "ncu_report").mkdir(parents=True)
    (fake / "ncu_report" / "__init__.py").write_text("class IAction:  # 2025.3.1 has no sections()\n    pass\n")
    (fake / "ncu_report-2025.3.1.dist-info").mkdir()
    (fake / "ncu_report-2025.3.1.dist-info" / "METADATA").write_text("Name: ncu-report\nVersion: 2025.3.1\n")
    fails_with(
        "ncu-report 2025.3.1 is too old for Kernel Lab: pip install 'ncu-report>=2026.3'",
        "diagnose",
        str(samples.report("memory_bound")),
        env={"PYTHONPATH": f"{fake}:{ROOT}"},
    )


def test_the_magics_in_a_real_kernel_take_replay_and_help_alone_and_say_bad_cells_in_one_line():
    report = samples.report("memory_bound")
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(c)
        for c in (
            "%load_ext kernel_lab",
            f"%%profile --replay {report}",
            "%%profile --help",
            "%%optimize --help",
            "%%profile",
            f"%%optimize --replay {report}\n{SYNTAX_ERROR}",
            f"%%optimize --replay {report}\n{NO_CONVENTION}",
        )
    ]
    execute(nb, allow_errors=True)
    replayed, profile_help, optimize_help, empty, syntax, convention = nb.cells[1:]
    assert "REPLAYING the recorded report" in outputs(replayed) and "add_kernel" in outputs(replayed)
    assert "--replay REPLAY" in outputs(profile_help) and "--rounds ROUNDS" in outputs(optimize_help)
    for cell in (replayed, profile_help, optimize_help):
        assert not any(o.output_type == "error" for o in cell.outputs), outputs(cell)
    assert (
        "UsageError: %%profile: the cell has no code. Put the cell's code below the %%profile line, or diagnose a "
        "recorded report: %%profile --replay REPORT." in outputs(empty)
    )
    for cell, line in (
        (syntax, "Line 4 of the cell: syntax error ('(' was never closed). Fix the cell and run it again."),
        (convention, "The cell defines no make_inputs() and no run(*inputs), so its versions cannot be checked or timed."),
    ):
        error = cell.outputs[-1]
        assert error.output_type == "error" and error.ename == "InvalidCellError", outputs(cell)
        assert len(error.traceback) == 1 and line in error.traceback[0]
