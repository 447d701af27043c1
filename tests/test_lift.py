"""From a model to a kernel and back (issue #42), on the H200 fixtures of two model steps: a cell calling two
library kernels (tests/cells/models/library_step.py, minilib) and an MLP block compiled with torch.compile.

Lifting is checked against the recorded launches themselves (every argument, the grid), the lifted library cells
are judged on the CPU against the library's own kernels, and putting back is checked by what the library's own
call then computes. Inductor's kernels only exist in the GPU fixture; the one put back here is the recorded
GELU kernel's file at a size the CPU interpreter runs in a moment.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect
import sys
from pathlib import Path

import pytest
from conftest import run_python

import kernel_lab
from kernel_lab.errors import KernelLabError
from kernel_lab.lifting import patch as patches
from kernel_lab.lifting import source as src
from kernel_lab.lifting import workload
from kernel_lab.lifting.changes import CannotPutBack
from kernel_lab.lifting.changes import load as load_cell
from kernel_lab.lifting.pick import lift_from
from kernel_lab.models import CellRecord, Kernel, LaunchRecord, Profile, TensorRecord
from kernel_lab.profiling import launches
from kernel_lab.profiling.replay import load

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "tests" / "cells" / "models"
LIBRARY = {"_rms_norm_forward_kernel": "library_step", "_fg_kernel": "library_step"}
INDUCTOR = {
    "triton_red_fused__to_copy_add_mean_mul_pow_rsqrt_0": "mlp_block_compiled",
    "triton_poi_fused_gelu_1": "mlp_block_compiled",
}


@pytest.fixture
def interpreted(monkeypatch):
    """Triton's CPU interpreter for the kernels defined from now on, and minilib imported anew (its kernels
    interpreted): the library the lifted cells' references import."""
    from kernel_lab import interpreter

    monkeypatch.setenv("TRITON_INTERPRET", "1")
    interpreter.install()
    monkeypatch.syspath_prepend(str(MODELS))
    for name in [n for n in sys.modules if n == "minilib" or n.startswith("minilib.")]:
        monkeypatch.delitem(sys.modules, name)
    importlib.import_module("minilib")
    return importlib.import_module("minilib.swiglu"), importlib.import_module("minilib.rms_norm")


def record_of(h200, kernel: str) -> tuple[Profile, LaunchRecord]:
    profile = load(h200(LIBRARY.get(kernel) or INDUCTOR[kernel]))
    assert profile.record is not None
    return profile, next(x for x in profile.record.launches if x.kernel == kernel)


class Capture:
    """Stands for a kernel: ``capture[grid](...)`` keeps the launch (the grid evaluated as Triton would)."""

    def __init__(self, params: list[str]) -> None:
        self.params = params
        self.named: dict = {}
        self.grid: tuple = ()

    def __getitem__(self, grid):
        def launch(*args, **kwargs):
            self.named = {**dict(zip(self.params, args)), **kwargs}
            self.grid = tuple(grid(self.named) if callable(grid) else grid)

        return launch


# --- lifting: the launch rebuilt exactly ----------------------------------------------------------------------------


@pytest.mark.parametrize("kernel", [*LIBRARY, *INDUCTOR])
def test_the_lifted_cell_launches_as_recorded(h200, interpreted, kernel):
    """At the recorded sizes (make_inputs' defaults) and dtypes, run() passes every argument as the profiled run
    did: each tensor's shape, dtype, strides and offset, each scalar, constexpr and launch option, and the grid
    (for Inductor's launches, rebuilt from its grid kind: as many blocks as the report measured)."""
    import torch

    profile, recorded = record_of(h200, kernel)
    lifted = kernel_lab.lift(profile, kernel)
    cell = load_cell(lifted.cell, f"test_{kernel}")
    if hasattr(cell, "BF16"):
        cell.BF16 = torch.bfloat16  # the recorded dtype (the cell's CPU stand-in is float32)
    capture = Capture(list(inspect.signature(getattr(cell, kernel).fn).parameters))
    setattr(cell, kernel, capture)
    cell.run(*cell.make_inputs())
    want = dict(recorded.args)
    assert list(capture.named) == list(want)
    for name, value in want.items():
        got = capture.named[name]
        if isinstance(value, TensorRecord):
            made = launches.tensor_record(got)
            assert (made.shape, made.dtype, made.strides, made.offset) == (
                value.shape, value.dtype, value.strides, value.offset,
            ), name  # fmt: skip
        else:
            assert got == value and type(got) is type(value), name
    measured = next(k for k in profile.kernels if k.name == kernel).get("launch__grid_size")
    assert capture.grid == (recorded.grid or lifted.grid) and measured == float(int(torch.tensor(capture.grid).prod()))


def test_sizes_vary_where_the_kernel_masks_and_inductor_did_not_fix_them(h200):
    rms = kernel_lab.lift(load(h200("library_step")), "_rms_norm_forward_kernel")
    assert rms.vary and "def make_inputs(size0=8192, n_cols=2048):" in rms.cell
    assert 'SHAPES = [(8192, 2048)] if DEVICE == "cuda" else [(40, 40)]' in rms.cell
    gelu = kernel_lab.lift(load(h200("mlp_block_compiled")), "triton_poi_fused_gelu_1")
    assert not gelu.vary and "def make_inputs():" in gelu.cell and "SHAPES" not in gelu.cell.split("# --- from")[0]
    assert 'lambda META: (triton.cdiv(67108864, META["XBLOCK"]),)' in gelu.cell  # the grid follows XBLOCK
    assert any("Inductor wrote the sizes into the kernel" in n for n in gelu.notes)
    assert any("replay" in n for n in gelu.notes)


def test_the_kernel_comes_with_what_it_uses_and_nothing_else():
    """Helpers, constants and imports the kernel reads are copied in file order, through the helpers' own needs;
    a relative import is made absolute; the file's other code stays out."""
    text = """
import math
import triton
import triton.language as tl
from .utils import scale_of

UNUSED = 3
K: tl.constexpr = tl.constexpr(2)


@triton.jit
def _square(x):
    return x * x * K


@triton.jit
def _twice(x):
    return _square(x) + _square(x)


def launcher(x):
    return math.pi


@triton.autotune(configs=[], key=["n"])
@triton.jit
def kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    out = y_ptr + offsets
    tl.store(out, _twice(tl.load(x_ptr + offsets, mask=offsets < n)) * scale_of(1), mask=offsets < n)
"""
    got = src.extract(text, "kernel", package="lib.ops")
    assert got.helpers.splitlines()[0] == "from lib.ops.utils import scale_of"
    assert "K: tl.constexpr" in got.helpers and "def _square" in got.helpers and "def _twice" in got.helpers
    assert "UNUSED" not in got.helpers and "launcher" not in got.helpers and "import math" not in got.helpers
    assert got.kernel.startswith("@triton.jit\ndef kernel(") and got.dropped[0].startswith("triton.autotune")
    fn = src.kernel_def(ast.parse(text), "kernel")
    assert src.written(fn, ["x_ptr", "y_ptr"]) == ["y_ptr"] and src.masked(fn)


def test_lifting_what_cannot_be_lifted_says_so_in_one_line(h200, sample):
    profile = load(h200("library_step"))
    with pytest.raises(KernelLabError, match="No launch of a kernel named 'gemm'") as found:
        kernel_lab.lift(profile, "gemm")
    assert "_rms_norm_forward_kernel, _fg_kernel" in str(found.value) and "\n" not in str(found.value)
    with pytest.raises(KernelLabError, match="has no launch record"):
        kernel_lab.lift(sample("memory_bound"), "vector_add")
    with pytest.raises(KernelLabError, match="no Triton launch of it was recorded"):
        kernel_lab.lift(load(sample("memory_bound")))


def test_kernel_lab_lift_is_the_apis_function(h200):
    from kernel_lab import api

    assert kernel_lab.lift(h200("library_step")).kernel == "_fg_kernel"  # the longest, by default
    assert api.lift(h200("library_step"), "_rms_norm_forward_kernel").kernel == "_rms_norm_forward_kernel"
    fresh = run_python("-c", "import kernel_lab; print(callable(kernel_lab.lift), callable(kernel_lab.put_back))")
    assert fresh.stdout.split() == ["True", "True"], fresh.stderr


# --- the judge: the lifted cell against the library's own kernel ------------------------------------------------------

BREAK = {  # a change to the copy only (the reference imports the library): the judge must see it
    "_fg_kernel": ("f_row = e_row * tl.sigmoid(e_row)", "f_row = e_row * tl.sigmoid(e_row * 1.5)"),
    "_rms_norm_forward_kernel": ("rstd = rsqrt(mean_square + eps)", "rstd = rsqrt(mean_square + eps) * 1.01"),
}


@pytest.mark.parametrize("kernel", list(LIBRARY))
def test_the_lifted_library_cell_passes_the_judge_and_a_broken_copy_does_not(h200, interpreted, kernel):
    from kernel_lab.verify import Judge, Options

    lifted = kernel_lab.lift(load(h200("library_step")), kernel)
    assert lifted.module == f"minilib.{'swiglu' if kernel == '_fg_kernel' else 'rms_norm'}"
    assert "importlib.import_module('minilib." in lifted.reference and lifted.reference.endswith("run = reference  # "
        "the judge's reference: the original kernel, launched as recorded\n")  # fmt: skip
    old, new = BREAK[kernel]
    assert lifted.cell.count(old) == 1
    with Judge(lifted.reference, Options(seeds=2, timeout=240), "cpu", time=False) as judge:
        right, wrong = judge.check_many([lifted.cell, lifted.cell.replace(old, new)])
    assert right.correct, right.reason
    assert not wrong.correct and wrong.failure == "wrong_values", wrong.reason


# --- an Inductor kernel: its file as recorded, at a size the interpreter runs -----------------------------------------


def small_gelu(h200) -> tuple[Profile, str]:
    """The recorded GELU kernel's file (the report's copy) at 4096 elements instead of 67108864, in float32, as a
    profile of one launch: what Inductor writes for that size."""
    recorded = next(k for k in load(h200("mlp_block_compiled")).kernels if k.name == "triton_poi_fused_gelu_1")
    path, text = next((p, t) for p, t in recorded.source_files.items() if "torchinductor" in p)
    text = text.replace("67108864", "4096").replace("*bf16", "*fp32")
    launch = LaunchRecord(
        "triton_poi_fused_gelu_1", path, 10, None,
        (("in_out_ptr0", TensorRecord((64, 64), "float32", (64, 1), 1, 0, 16384)), ("xnumel", 4096),
         ("XBLOCK", 1024), ("num_warps", 4), ("num_stages", 1)), "inductor",
    )  # fmt: skip
    kernel = Kernel(0, launch.kernel, launch.kernel, {"launch__grid_size": 4.0}, source_files={path: text})
    return Profile((kernel,), "small_gelu.ncu-rep", "test", record=CellRecord(launches=(launch,))), text


def test_an_inductor_kernel_is_judged_against_its_file_and_put_back_as_a_triton_op(h200, interpreted, monkeypatch):
    import torch

    profile, text = small_gelu(h200)
    lifted = lift_from(profile, "triton_poi_fused_gelu_1")
    assert lifted.origin == "inductor" and "ORIGINAL_FILE" in lifted.reference and lifted.grid == (4,)
    from kernel_lab.verify import Judge, Options

    wrong_copy = lifted.cell.replace("0.044715", "0.05", 1)  # the copy's constant; the file's stays
    with Judge(lifted.reference, Options(seeds=2, timeout=240), "cpu", time=False) as judge:
        right, wrong = judge.check_many([lifted.cell, wrong_copy])
    assert right.correct, right.reason
    assert not wrong.correct
    # the compiled graph's module: Inductor's launcher of the kernel, as a global
    graph = load_cell(text.replace("triton_helpers.set_driver_to_gpu()", ""), "compiled_graph")
    monkeypatch.setitem(sys.modules, "compiled_graph", graph)
    launcher = graph.triton_poi_fused_gelu_1
    optimized = lifted.cell.replace("XBLOCK=1024", "XBLOCK=512")
    x = torch.randn(64, 64)
    want = x.clone()
    launcher.fn[(4,)](want, 4096, XBLOCK=1024)
    with kernel_lab.put_back(lifted, optimized) as patch:
        name = patch.op_name.removeprefix("kernel_lab::")
        schema = str(getattr(torch.ops.kernel_lab, name).default._schema)
        assert schema == f"kernel_lab::{name}(Tensor(a0!) in_out_ptr0) -> ()"
        assert graph.triton_poi_fused_gelu_1 is not launcher
        got = x.clone()
        graph.triton_poi_fused_gelu_1.run(got, 4096, stream=0)  # as the graph's call() launches it
        assert patch.routed == 1 and torch.equal(got, want)
        assert "XBLOCK=512" in patch.log[0] and any("routed compiled_graph.triton_poi_fused_gelu_1" in m for m in patch.log)
    assert graph.triton_poi_fused_gelu_1 is launcher and patch.log[-1] == "restored compiled_graph.triton_poi_fused_gelu_1"


# --- putting a library kernel back ------------------------------------------------------------------------------------

DOUBLED = ("h_row = f_row * g_row", "h_row = f_row * g_row * 2")  # a version whose work shows in the model's output


def test_a_library_kernel_put_back_runs_in_the_librarys_own_call_until_undone(h200, interpreted):
    import torch

    swiglu, _ = interpreted
    original = swiglu._fg_kernel
    lifted = kernel_lab.lift(load(h200("library_step")), "_fg_kernel")
    optimized = lifted.cell.replace(*DOUBLED).replace("BLOCK_SIZE=1024", "BLOCK_SIZE=2048")
    e, g = torch.randn(1, 40, 40), torch.randn(1, 40, 40)
    before = swiglu.swiglu(e, g)
    patch = kernel_lab.put_back(lifted, optimized)
    try:
        assert swiglu._fg_kernel is not original and patch in patches.ACTIVE
        assert patch.log == ["replaced minilib.swiglu._fg_kernel with the optimized _fg_kernel (BLOCK_SIZE=2048)"]
        assert torch.equal(swiglu.swiglu(e, g), 2 * before) and patch.routed == 1
        other = swiglu.swiglu(e.double(), g.double())  # not the profiled configuration: the library's kernel runs
        assert torch.allclose(other, before.double()) and patch.passed == 1
    finally:
        patch.undo()
    assert swiglu._fg_kernel is original and patch not in patches.ACTIVE and patch.log[-1] == "restored minilib.swiglu._fg_kernel"
    assert torch.equal(swiglu.swiglu(e, g), before) and "undone; 1 launch(es) ran the new kernel" in str(patch)


def test_a_row_kernel_is_put_back_only_where_the_library_picks_the_profiled_block(h200, interpreted):
    """Liger's RMSNorm block covers a whole row (BLOCK_SIZE = next_power_of_2(n_cols)): the new kernel runs where
    the library's launch has the profiled BLOCK_SIZE 2048 and num_warps 8, not at a 64-wide row."""
    import torch

    _, rms = interpreted
    lifted = kernel_lab.lift(load(h200("library_step")), "_rms_norm_forward_kernel")
    optimized = lifted.cell.replace("Y_row = X_row * (offset + W_row)", "Y_row = X_row * (offset + W_row) * 2")
    wide, narrow = (torch.randn(3, 2000), torch.randn(2000)), (torch.randn(3, 64), torch.randn(64))
    before = [rms.rms_norm(*xs, 1e-6) for xs in (wide, narrow)]
    with kernel_lab.put_back(lifted, optimized) as patch:
        after = [rms.rms_norm(*xs, 1e-6) for xs in (wide, narrow)]
    assert torch.allclose(after[0], 2 * before[0]) and torch.equal(after[1], before[1])
    assert (patch.routed, patch.passed) == (1, 1)


def test_putting_back_a_version_that_changes_what_is_computed_is_refused(h200, interpreted):
    lifted = kernel_lab.lift(load(h200("library_step")), "_fg_kernel")
    other_count = lifted.cell.replace("        e, g, h, size0 * size0,", "        e, g, h, size0 * size0 - 1,", 1)
    assert other_count != lifted.cell
    with pytest.raises(CannotPutBack, match=r"passes n_elements=1599 where the library passes 1600"):
        kernel_lab.put_back(lifted, other_count)
    two = lifted.cell.replace("    return h\n\n\ndef reference", "    _fg_kernel[(1,)](e, g, h, 1, BLOCK_SIZE=16, LONG_INDEXING=0)\n"
                              "    return h\n\n\ndef reference", 1)  # fmt: skip
    with pytest.raises(CannotPutBack, match="launches 2 kernels where the library launched one"):
        kernel_lab.put_back(lifted, two)
    with pytest.raises(CannotPutBack, match="nothing to put back"):
        kernel_lab.put_back(lifted, lifted.cell)
    assert not patches.ACTIVE


LATE = """
import os, sys, torch, triton
os.environ["TRITON_INTERPRET"] = "1"  # after Triton's import: tl.sigmoid was made for a GPU
from kernel_lab import interpreter
interpreter.install()
sys.path.insert(0, sys.argv[1])
from minilib.swiglu import swiglu
e, g = torch.randn(1, 40, 40), torch.randn(1, 40, 40)
print(torch.allclose(swiglu(e, g), e * torch.sigmoid(e) * g, atol=1e-5))
"""


@pytest.mark.slow
def test_a_library_kernel_runs_interpreted_where_triton_was_imported_before_the_interpreter_was_turned_on():
    """A notebook that imported Triton, then set TRITON_INTERPRET=1: the library's kernel calls tl.sigmoid, one of
    triton.language's own jit functions made at import, which the interpreter would refuse to call."""
    done = run_python("-c", LATE, str(MODELS))
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["True"]


# --- the workload's table ---------------------------------------------------------------------------------------------


def test_the_workload_table_ranks_kernels_by_time_with_their_sources(h200):
    table = workload(kernel_lab.diagnose(h200("library_step")))
    assert [r.kernel for r in table.rows] == ["_fg_kernel", "_rms_norm_forward_kernel"]
    fg, rms = table.rows
    assert fg.time_us == pytest.approx(91.072) and rms.time_us == pytest.approx(17.44)
    assert fg.share == pytest.approx(91.072 / (91.072 + 17.44)) and rms.cumulative == pytest.approx(1.0)
    assert table.top == ("_fg_kernel",) and fg.share > 0.8  # the fewest covering 80%
    # the launch record's file and line: the library's, though the report's copy came from the corpus' identical text
    assert (fg.file, fg.line) == ("/work/main/tests/cells/models/minilib/swiglu.py", 38)
    assert fg.bottleneck == "memory_bound" and fg.roof == "DRAM" and fg.liftable and fg.origin == "Triton"
    assert any("not measured" in n for n in table.notes) and any("--all-kernels" in n for n in table.notes)
    text = str(table)
    assert "REPLAYING" in text and "One kernel takes 84% of the profiled GPU time: _fg_kernel (84%)." in text
    assert "minilib/swiglu.py line 38" in text and max(len(line) for line in text.splitlines()) <= 100
    html = table._repr_html_()
    assert html.count("<tr") == 4 and "not measured" in html and "replay" in html
    compiled = workload(kernel_lab.diagnose(h200("mlp_block_compiled")))
    assert [r.origin for r in compiled.rows] == ["torch.compile", "torch.compile"]
    assert compiled.rows[0].kernel == "triton_poi_fused_gelu_1" and compiled.rows[0].line == 10


def test_a_report_without_a_record_is_still_ranked_and_says_why_nothing_can_be_lifted(sample):
    table = workload(kernel_lab.diagnose(sample("memory_bound")))
    assert len(table.rows) == 1 and not table.liftable and any("No launch record" in n for n in table.notes)
    assert "Lift one" not in str(table)


def test_profile_all_kernels_replays_as_the_workload(h200):
    from IPython.core.interactiveshell import InteractiveShell

    from kernel_lab.lifting.table import Workload

    InteractiveShell.clear_instance()
    shell = InteractiveShell.instance()
    try:
        assert shell.run_cell("%load_ext kernel_lab").success
        done = shell.run_cell(f"%%profile --replay {h200('mlp_block_compiled')} --all-kernels\n")
        assert done.success and isinstance(done.result, Workload) and done.result.replay
        plain = shell.run_cell(f"%%profile --replay {h200('mlp_block_compiled')}\n")
        assert not isinstance(plain.result, Workload)
    finally:
        InteractiveShell.clear_instance()


def test_the_dashboard_lifts_the_chosen_kernel_into_a_file(h200, tmp_path, monkeypatch):
    from kernel_lab.widgets.dashboard import dashboard

    monkeypatch.chdir(tmp_path)
    result = kernel_lab.diagnose(h200("library_step"))
    board = dashboard(result, workload=workload(result))
    tabs = board.children[0]
    assert tabs.get_title(0) == "Workload" and tabs.get_title(1) == "Summary"
    view = tabs.children[0]
    pick, button = view.children[1].children
    pick.value = "_rms_norm_forward_kernel"
    button.click()
    written = tmp_path / "lifted" / "_rms_norm_forward_kernel.py"
    assert written.read_text() == view.children[3].value and "def make_inputs(" in written.read_text()
    assert "%load lifted/_rms_norm_forward_kernel.py" in view.children[2].value
    assert not board.children[1].outputs  # no error from the callback


# --- the GPU script, as far as the CPU goes ---------------------------------------------------------------------------


def test_lift_step_replays_a_recorded_step_and_prints_its_table(h200, tmp_path, capsys, monkeypatch):
    spec = importlib.util.spec_from_file_location("lift_step", ROOT / "benchmarks" / "lift_step.py")
    script = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "lift_step", script)  # its dataclasses look their module up
    spec.loader.exec_module(script)
    assert script.main(["--replay", str(h200("library_step")), "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "lifted _fg_kernel (library; sizes vary)" in out
    assert out.rstrip().endswith("library_step: replay: nothing was run (the judge, optimize and the step's timing need a GPU)")
    done = script.Outcome("step", "k", "correct", (0.1, 0.05), (1.0, 0.9), "identical", 3)
    assert "0.1000 → 0.0500" in script.table([done]) and "1.000 → 0.900" in script.table([done])


STRIDED = """import triton
import triton.language as tl


@triton.jit
def scale_rows(x_ptr, y_ptr, n_rows, n_cols, stride_x, stride_y, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask)
    tl.store(y_ptr + row * stride_y + cols, x * 2, mask=mask)
"""


def test_a_view_of_a_wider_tensor_is_cut_from_a_storage_sized_in_the_cells_sizes(tmp_path, interpreted):
    """x is the second half of each row of an (8, 32) tensor (a chunk, as a SwiGLU's gate): the cell makes the
    storage and cuts the view in run(), its strides and offset written in the sizes, so other sizes work too."""
    import torch

    (tmp_path / "lib_strided.py").write_text(STRIDED)
    x = TensorRecord((8, 16), "float32", (32, 1), 1000, 64, 8 * 32 * 4)
    y = TensorRecord((8, 16), "float32", (16, 1), 5000, 0, 8 * 16 * 4)
    args = (("x_ptr", x), ("y_ptr", y), ("n_rows", 8), ("n_cols", 16), ("stride_x", 32), ("stride_y", 16), ("BLOCK", 16))
    launch = LaunchRecord("scale_rows", str(tmp_path / "lib_strided.py"), 5, (8,), args)
    kernel = Kernel(0, "scale_rows", "scale_rows", {"launch__grid_size": 8.0})
    lifted = lift_from(Profile((kernel,), "strided.ncu-rep", "test", record=CellRecord(launches=(launch,))), "scale_rows")
    assert lifted.vary and "def run(x_ptr_storage, y_ptr):" in lifted.cell
    assert "x_ptr_view = torch.as_strided(x_ptr_storage, (n_rows, n_cols), (2 * n_cols, 1), n_cols)" in lifted.cell
    assert "importlib.import_module('lib_strided')" in lifted.cell  # the kernel's file, as a module
    cell = load_cell(lifted.cell, "strided_cell")
    capture = Capture(["x_ptr", "y_ptr", "n_rows", "n_cols", "stride_x", "stride_y", "BLOCK"])
    real, cell.scale_rows = cell.scale_rows, capture
    cell.run(*cell.make_inputs())
    got = launches.tensor_record(capture.named["x_ptr"])
    assert (got.shape, got.strides, got.offset, got.storage_bytes) == (x.shape, x.strides, x.offset, x.storage_bytes)
    assert [capture.named[n] for n in ("n_rows", "n_cols", "stride_x", "stride_y")] == [8, 16, 32, 16]
    cell.scale_rows = real
    for shape in ((8, 16), (5, 11)):
        inputs = cell.make_inputs(*shape)
        out, want = cell.run(*[t.clone() for t in inputs]), cell.reference(*[t.clone() for t in inputs])
        half = inputs[0].view(shape[0], 2 * shape[1])[:, shape[1] :]
        assert torch.equal(out, want) and torch.equal(out, 2 * half)


def test_the_lift_button_says_in_one_line_why_a_kernel_cannot_be_lifted(h200, tmp_path, monkeypatch):
    from dataclasses import replace

    from kernel_lab.results.profile import Result
    from kernel_lab.widgets.dashboard import dashboard

    monkeypatch.chdir(tmp_path)
    result = kernel_lab.diagnose(h200("library_step"))
    lost = Result(replace(result.profile, record=None), result.diagnoses)  # the record went missing since
    board = dashboard(lost, workload=replace(workload(result), result=lost))
    view = board.children[0].children[0]
    view.children[1].children[1].click()
    assert "has no launch record" in view.children[2].value and not (tmp_path / "lifted").exists()
    assert not board.children[1].outputs  # a line in the view, no traceback
