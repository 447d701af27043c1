"""The whole path for real: ncu on a GPU. Marked ``gpu``: skipped where there is no GPU or ncu."""

from __future__ import annotations

import pytest
from conftest import run_python

import kernel_lab
from kernel_lab import samples
from kernel_lab.errors import CellError, NoKernelMatchedError

pytestmark = pytest.mark.gpu


def test_profile_a_triton_cell_with_live_progress(tmp_path):
    events = []
    result = kernel_lab.profile(samples.cell("memory_bound"), output=tmp_path / "add.ncu-rep", on_progress=events.append)
    assert (tmp_path / "add.ncu-rep").exists()
    assert not result.profile.replay and result.profile.collector.startswith("ncu ")
    assert [k.name for k in result.profile.kernels] == ["add_kernel"]  # warm-up and torch.randn not profiled
    assert events and events[-1].passes and events[-1].kernel == "add_kernel"
    assert result.diagnoses[0].bottlenecks[0].kind == "memory_bound"


def test_profile_a_cuda_cell_maps_conflicts_to_source_lines():
    result = kernel_lab.profile(samples.cell("shared_bank_conflicts"))
    first = result.diagnoses[0].bottlenecks[0]
    assert first.kind == "shared_bank_conflicts"
    assert first.source_lines, "CUDA built with -lineinfo maps back to the source"


def test_no_kernel_matched_lists_what_ran():
    with pytest.raises(NoKernelMatchedError) as err:
        kernel_lab.profile(samples.cell("memory_bound"), kernels="no_such_kernel")
    assert "add_kernel" in err.value.kernels_seen


def test_cell_error_under_ncu_shows_the_users_traceback(tmp_path):
    cell = tmp_path / "bad.py"
    cell.write_text("import torch\nx = torch.ones(3, device='cuda')\ny = x @ torch.ones(4, device='cuda')\n")
    with pytest.raises(CellError) as err:
        kernel_lab.profile(cell)
    assert f'File "{cell}", line 3' in err.value.traceback and "RuntimeError" in str(err.value)


def test_cli_profile_writes_a_report(tmp_path):
    out = tmp_path / "cli.ncu-rep"
    proc = run_python("-m", "kernel_lab.cli", "profile", str(samples.cell("uncoalesced_global")), "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    assert out.exists() and "[uncoalesced_global]" in proc.stdout


def test_profile_magic_in_a_real_kernel():
    pytest.importorskip("nbclient", reason="needs Jupyter (the GPU machine of the device tool has none)")
    import nbformat
    from test_notebook import execute, outputs

    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("%load_ext kernel_lab"),
        nbformat.v4.new_code_cell("%%profile\n" + samples.cell("memory_bound").read_text()),
    ]
    execute(nb)
    shown = outputs(nb.cells[1])
    assert "profiled on NVIDIA" in shown and "memory_bound" in shown and "REPLAYING" not in shown


def test_optimize_for_real_finds_a_faster_verified_version(tmp_path):
    from pathlib import Path

    cell = Path(__file__).resolve().parent.parent / "benchmarks" / "teaching" / "add_tiny_block.py"
    result = kernel_lab.optimize(cell, rounds=1, candidates=2, root=tmp_path)
    best = result.best
    assert best is not result.session.original and best.correct and best.significant and best.speedup > 1.2
    assert (result.session.folder(result.session.original) / "profile.ncu-rep").exists()
    assert (result.session.folder(best) / "profile.ncu-rep").exists()  # profiled for the before/after view
    assert "Bottlenecks gone" in result._repr_html_() or "Speedup" in result._repr_html_()


def test_the_judge_builds_a_cuda_candidate_in_halves_with_the_same_results(tmp_path):
    """A candidate process builds the sample split (kernels alone, glue on the precompiled header): its
    output equals the cell's reference and the build is the split one, not the fallback."""
    code = (
        "import runpy, sys, torch\n"
        "from kernel_lab import fastbuild\n"
        "fastbuild.install()\n"
        "cell = runpy.run_path(sys.argv[1])\n"
        "inputs = cell['make_inputs']()\n"
        "assert torch.equal(cell['run'](*inputs), cell['reference'](*inputs))\n"
    )
    proc = run_python("-c", code, str(samples.cell("shared_bank_conflicts")), env={"TORCH_EXTENSIONS_DIR": str(tmp_path)})
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "the split build failed" not in proc.stderr
    (folder,) = (tmp_path / "kernel_lab" / "fast").iterdir()
    assert "kl_launch_transpose_naive_smem" in (folder / "main.cpp").read_text()
    includes = [line for line in (folder / "cuda.cu").read_text().splitlines() if line.startswith("#include")]
    assert includes and not any("torch" in line or "ATen" in line for line in includes), includes
