"""%%profile in a real Jupyter kernel (nbclient), in replay mode and on its error paths."""

from __future__ import annotations

import nbformat
import pytest
from conftest import ROOT, has_gpu
from nbclient import NotebookClient

pytestmark = pytest.mark.slow  # every test runs a notebook kernel


def execute(nb: nbformat.NotebookNode, allow_errors: bool = False) -> nbformat.NotebookNode:
    NotebookClient(
        nb, timeout=300, kernel_name="python3", allow_errors=allow_errors, resources={"metadata": {"path": str(ROOT)}}
    ).execute()
    return nb


def outputs(cell) -> str:
    parts = []
    for out in cell.get("outputs", []):
        data = out.get("data", {})
        parts += [
            out.get("text", ""),
            data.get("text/html", ""),
            data.get("text/plain", ""),
            out.get("ename", ""),
            out.get("evalue", ""),
        ]
        parts += out.get("traceback", [])
    return "\n".join(parts)


def test_tour_notebook_runs_in_replay_mode():
    nb = execute(nbformat.read(ROOT / "notebooks" / "tour_profile.ipynb", as_version=4))
    code = [c for c in nb.cells if c.cell_type == "code"]
    strided = outputs(code[1])
    assert "REPLAYING the recorded report" in strided and "no GPU was used" in strided
    assert "uncoalesced_global" in strided and "<table>" in strided
    assert "strided_copy_kernel" in outputs(code[2])  # result.summary
    assert outputs(code[3]).strip().startswith("[('uncoalesced_global'")
    assert "shared_bank_conflicts" in outputs(code[5])
    assert "shared_bank_conflicts" not in outputs(code[6])


@pytest.mark.skipif(has_gpu(), reason="checks the no-GPU message")
def test_profile_without_gpu_fails_with_one_line_that_says_what_to_do():
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("%load_ext kernel_lab"),
        nbformat.v4.new_code_cell("%%profile\nprint('never run here')"),
        nbformat.v4.new_code_cell("%%profile --no-such-option\npass"),
    ]
    execute(nb, allow_errors=True)
    no_gpu = nb.cells[1].outputs[-1]
    assert no_gpu.output_type == "error" and no_gpu.ename == "NoGpuError"
    assert len(no_gpu.traceback) == 1 and "--replay" in no_gpu.traceback[0]
    assert "never run here" not in outputs(nb.cells[1])
    assert not any(o.output_type == "display_data" for o in nb.cells[1].outputs)  # no progress line before the check
    usage = outputs(nb.cells[2])
    assert "UsageError: %%profile: unrecognized arguments: --no-such-option" in usage and "--help" in usage


def test_dashboard_is_built_in_a_real_kernel():
    import kernel_lab

    r = kernel_lab.diagnose(kernel_lab.samples.report("memory_bound"))
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("import kernel_lab"),
        nbformat.v4.new_code_cell("r = kernel_lab.diagnose(kernel_lab.samples.report('memory_bound'))\nr"),
        nbformat.v4.new_code_cell(
            "d = r.dashboard()\ntabs = d.children[0]\n"
            "print([tabs.get_title(i) for i in range(len(tabs.children))])\n"
            "metrics = tabs.children[2]\nsection, search = metrics.children[0].children\n"
            "section.value = 'Occupancy'\nsearch.value = 'warps'\n"
            "print('Occupancy' in section.options, metrics.children[1].value.split('</p>')[0])"
        ),
        nbformat.v4.new_code_cell(
            "from kernel_lab.widgets.guard import guarded\nimport ipywidgets as w\n"
            "errors = w.Output()\nbroken = guarded(errors)(lambda change: 1 / 0)\nbroken(None)\n"
            "print('shown:', any('ZeroDivisionError' in str(o) for o in errors.outputs))"
        ),
    ]
    execute(nb)
    bundle = nb.cells[1].outputs[0]["data"]
    assert "application/vnd.jupyter.widget-view+json" in bundle  # interactive where widgets render
    assert "REPLAYING" in bundle["text/html"] and "REPLAYING" in bundle["text/plain"]  # static and text fallbacks
    printed = outputs(nb.cells[2])
    assert "['Summary', 'Roofline', 'Metrics', 'Source', 'Raw rules']" in printed
    occupancy_warps = r.df[(r.df.section == "Occupancy") & r.df.metric.str.contains("warps", case=False)]
    assert f"True <p>{len(occupancy_warps)} metric values" in printed and len(occupancy_warps) > 0
    assert "shown: True" in outputs(nb.cells[3])  # a failing callback's traceback is shown, not swallowed


def test_optimize_tour_notebook_runs_in_replay_mode(tmp_path):
    nb = nbformat.read(ROOT / "notebooks" / "tour_optimize.ipynb", as_version=4)
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    code = [c for c in nb.cells if c.cell_type == "code"]
    shown = outputs(code[1])
    assert "Replay mode" in shown and "CPU interpreter" in shown and "v001" in shown
    assert "v000" in outputs(code[2]) and "search" in outputs(code[2])
    assert outputs(code[3]).strip() == "True True"
    assert "after reject: yes (rejected)" in outputs(code[4]) and "after undo: yes\n" in outputs(code[4])
    assert (tmp_path / ".kernel_lab").is_dir()  # sessions live beside the notebook
