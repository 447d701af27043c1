"""The seams between the stages: the profiler backends and their failures (through a stand-in ``ncu`` that
replays recorded logs), settings reaching every stage, and the six bugs of issue #9, each reproduced."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest
from openai_server import OpenAIServer, error
from test_notebook import execute, outputs

import kernel_lab
from kernel_lab import profiling, samples
from kernel_lab.cells import CellSource
from kernel_lab.errors import CellError, NoKernelMatchedError, ProfilingError
from kernel_lab.profiling.ncu import ENABLE_COUNTERS, NcuProfiler
from kernel_lab.settings import Settings

FAKE = Path(__file__).resolve().parent / "fake_gpu"
CELLS = Path(__file__).resolve().parent / "cells"
ADD = CellSource.of(CELLS / "add_ref.py")


@pytest.fixture
def fake_gpu(monkeypatch, tmp_path):
    """A machine that says it has a GPU (a stand-in nvidia-smi on PATH); ncu is at FAKE / "ncu" only."""
    monkeypatch.setenv("PATH", f"{FAKE / 'path'}:{Path('/usr/bin')}:{Path('/bin')}:{Path(__import__('sys').executable).parent}")
    monkeypatch.setenv("FAKE_NCU_REPORT", str(samples.report("memory_bound")))
    monkeypatch.setenv("FAKE_NCU_ARGV", str(tmp_path / "argv.json"))
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    return tmp_path / "argv.json"


def collect(mode: str, monkeypatch, **settings) -> kernel_lab.models.Profile:
    monkeypatch.setenv("FAKE_NCU", mode)
    return profiling.default().collect(ADD, Settings(ncu_path=str(FAKE / "ncu"), **settings))


# --- the ncu backend, each outcome -----------------------------------------------------------------


def test_ncu_success_reads_the_report_and_builds_the_targeted_command(fake_gpu, monkeypatch):
    profile = collect("ok", monkeypatch, launch_count=5)
    assert [k.name for k in profile.kernels] == ["add_kernel"] and not profile.replay
    assert profile.collector == "ncu 2025.3.1.0 command line"
    argv = json.loads(fake_gpu.read_text())
    assert argv[argv.index("-c") + 1] == "5" and argv[argv.index("-k") + 1] == "regex:^(add_kernel)(<.*)?$"
    assert argv[argv.index("--nvtx-include") + 1] == "kernel_lab@profile/" and "--import-source" in argv


def test_ncu_cell_error_gives_the_users_traceback(fake_gpu, monkeypatch):
    with pytest.raises(CellError) as err:
        collect("cell_error", monkeypatch)
    assert "mat1 and mat2 shapes cannot be multiplied" in str(err.value) and "==PROF==" not in err.value.traceback


def test_ncu_no_kernel_matched_lists_what_ran(fake_gpu, monkeypatch):
    with pytest.raises(NoKernelMatchedError) as err:
        collect("no_kernels", monkeypatch)
    assert err.value.kernels_seen == ["add_kernel"] and "--all-kernels" in str(err.value)


@pytest.mark.slow
def test_ncu_counters_refused_falls_back_to_a_trace_and_says_how_to_enable_them(fake_gpu, monkeypatch):
    profile = collect("refused", monkeypatch)
    assert profile.notes[0] == ENABLE_COUNTERS and "counters were not available" in profile.notes[1]


def test_ncu_failing_otherwise_shows_its_output(fake_gpu, monkeypatch):
    with pytest.raises(ProfilingError, match="ncu exited with code 1") as err:
        collect("failed", monkeypatch)
    assert "Failed to prepare kernel" in err.value.log


def test_ncu_that_hangs_is_stopped_at_the_timeout(fake_gpu, monkeypatch):
    with pytest.raises(ProfilingError, match="did not finish within 2 s"):
        collect("hang", monkeypatch, timeout=2.0)


def test_or_replay_replays_when_there_is_no_gpu_and_says_why(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # no nvidia-smi, no ncu
    profile = profiling.or_replay(samples.report("memory_bound")).collect(ADD, Settings())
    assert profile.replay and profile.notes[0].startswith("No NVIDIA GPU is visible")


# --- settings: one precedence rule ------------------------------------------------------------------


def test_settings_precedence_explicit_config_environment_default():
    env = {"KERNEL_LAB_LAUNCH_COUNT": "9", "KERNEL_LAB_NCU": "/env/ncu", "KERNEL_LAB_MODEL": "env-model"}
    s = Settings.resolve({"launch_count": 3}, {"launch_count": 5, "ncu_path": "/config/ncu"}, env)
    assert (s.launch_count, s.ncu_path, s.model, s.timeout) == (3, "/config/ncu", "env-model", 600.0)
    assert Settings.resolve({}, {}, env).launch_count == 9 and Settings.resolve({}, {}, {}).launch_count == 20
    assert Settings.resolve({}, {}, env).rewriter_name == "llm" and Settings.resolve({}, {}, {}).rewriter_name == "search"


def test_a_bad_environment_value_is_one_line():
    with pytest.raises(kernel_lab.errors.KernelLabError, match=r"\$KERNEL_LAB_ROUNDS is 'many'"):
        Settings.resolve({}, {}, {"KERNEL_LAB_ROUNDS": "many"})


# --- bug 2: %config reaches %%optimize's profiling --------------------------------------------------


@pytest.mark.slow
def test_config_ncu_path_launch_count_and_timeout_reach_optimize(fake_gpu, tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(
            "%load_ext kernel_lab\nimport os\n"
            f"%config KernelLabMagics.ncu_path = {str(FAKE / 'ncu')!r}\n%config KernelLabMagics.launch_count = 7"
        ),
        nbformat.v4.new_code_cell(f"%%optimize --rounds 1 --candidates 1 --root {tmp_path}\n" + ADD.text),
        nbformat.v4.new_code_cell("os.environ['FAKE_NCU'] = 'hang'\n%config KernelLabMagics.timeout = 2"),
        nbformat.v4.new_code_cell(f"%%optimize --rounds 1 --root {tmp_path}\n" + ADD.text),
    ]
    execute(nb, allow_errors=True)
    argv = json.loads(fake_gpu.read_text())
    assert argv[argv.index("-c") + 1] == "7"
    assert "v001" in outputs(nb.cells[1])
    assert "did not finish within 2 s" in outputs(nb.cells[3])


# --- bugs 1, 4, 5, 6: what the LLM is told, and what happens when it fails -----------------------------


def fenced(source: str) -> str:
    return f"Faster:\n\n```python\n{source}```\n\nIt addresses memory_bound."


@pytest.mark.slow
def test_cuda_cells_are_described_to_the_llm_as_cuda(tmp_path, monkeypatch):  # bug 1
    monkeypatch.setattr("kernel_lab.profiling.ncu.has_gpu", lambda: True)  # without one, a CUDA cell is refused at once
    with OpenAIServer() as server:
        server.script("No code, sorry.")
        kernel_lab.optimize(
            samples.cell("shared_bank_conflicts"),
            rounds=1,
            candidates=1,
            root=tmp_path,
            rewriter="llm",
            llm_workers=1,  # one conversation: the scripted replies go to it in order
            model="test-model",
            base_url=server.base_url,
            replay=samples.report("shared_bank_conflicts"),
        )
    assert "Language: CUDA C++" in server.requests[0].prompt


@pytest.mark.slow
def test_the_llm_is_told_which_kernel_each_bottleneck_belongs_to(tmp_path):  # bug 4
    with OpenAIServer() as server:
        server.script("No code, sorry.")
        kernel_lab.optimize(
            CELLS / "add_ref.py",
            rounds=1,
            candidates=1,
            root=tmp_path,
            rewriter="llm",
            llm_workers=1,  # one conversation: the scripted replies go to it in order
            model="test-model",
            base_url=server.base_url,
            replay=samples.report("memory_bound"),
        )
    assert "   kernel: add_kernel" in server.requests[0].prompt


@pytest.mark.slow
def test_a_failing_llm_server_still_gives_a_result_with_every_version(tmp_path):  # bug 5
    with OpenAIServer() as server:
        server.script(*[error(500, "The server had an error", type="server_error")] * 3)
        result = kernel_lab.optimize(
            CELLS / "add_ref.py",
            rounds=1,
            candidates=1,
            root=tmp_path,
            rewriter="llm",
            llm_workers=1,  # one conversation: the scripted replies go to it in order
            model="test-model",
            base_url=server.base_url,
            replay=samples.report("memory_bound"),
        )
    assert len(server.requests) == 3  # the first try and two retries
    assert "the llm rewriter failed" in result.stopped and "HTTP 500" in result.stopped
    assert len(result.session.versions) == 1 and "v000" in str(result)


@pytest.mark.slow
def test_the_default_rewriter_is_the_same_from_python_as_from_the_cli(tmp_path, monkeypatch):  # bug 6
    with OpenAIServer() as server:
        monkeypatch.setenv("KERNEL_LAB_MODEL", "test-model")
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        server.script(fenced((CELLS / "add_fast.py").read_text()))
        result = kernel_lab.optimize(
            CELLS / "add_ref.py", rounds=1, llm_workers=1, root=tmp_path, replay=samples.report("memory_bound")
        )
    assert [v.origin for v in result.session.versions] == ["original", "llm:test-model"]


# --- the profiled live kernel: %%profile in place --------------------------------------------------------


@pytest.mark.slow
def test_the_profiled_kernel_profiles_a_cell_in_place_with_the_notebooks_variables(fake_gpu, tmp_path, monkeypatch):
    from kernel_lab.profiling import live

    spec = live.install(user=False, prefix=str(tmp_path / "prefix"))
    monkeypatch.setenv("JUPYTER_PATH", str(Path(spec).parent.parent))
    monkeypatch.setenv("KERNEL_LAB_NCU", str(FAKE / "ncu"))
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("%load_ext kernel_lab\nimport torch\nx, y = torch.randn(4096), torch.randn(4096)"),
        nbformat.v4.new_code_cell(
            "%%profile\nimport triton, triton.language as tl\n\n@triton.jit\n"
            "def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):\n"
            "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
            "    tl.store(out_ptr + offs, tl.load(x_ptr + offs) + tl.load(y_ptr + offs))\n\n"
            "out = torch.empty_like(x)  # x and y come from the cell above: only in place can this run\n"
            "add_kernel[(4,)](x, y, out, x.numel(), BLOCK=1024)"
        ),
        # compiled Triton (not the CPU interpreter) reads a kernel's source from its file, and so does ncu
        nbformat.v4.new_code_cell("import inspect\nprint('source read:', 'tl.store' in inspect.getsource(add_kernel.fn))"),
    ]
    from nbclient import NotebookClient

    NotebookClient(nb, timeout=300, kernel_name=live.KERNEL_NAME).execute()
    shown = outputs(nb.cells[1])
    assert "Profiled in place in this kernel" in shown and "add_kernel" in shown and "memory_bound" in shown
    assert "Whole cell: 1 launch" in shown  # the launch was recorded beside the cut report, and read with it
    assert "source read: True" in outputs(nb.cells[2])
    argv = json.loads(fake_gpu.read_text())  # the cut: this cell's range out of the kernel's growing report
    assert argv[:1] == ["-i"] and argv[argv.index("--nvtx-include") + 1] == "kernel_lab_live@profile/cell_1/"
    assert argv[argv.index("-k") + 1] == "regex:^(add_kernel)(<.*)?$"


@pytest.mark.slow
def test_without_a_gpu_the_profiled_kernel_starts_and_says_why(tmp_path, monkeypatch):
    from kernel_lab.profiling import live

    spec = live.install(user=False, prefix=str(tmp_path / "prefix"))
    monkeypatch.setenv("JUPYTER_PATH", str(Path(spec).parent.parent))
    monkeypatch.setenv("PATH", f"/usr/bin:/bin:{Path(__import__('sys').executable).parent}")  # no nvidia-smi
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("from kernel_lab.profiling import live\nprint(live.status())")]
    from nbclient import NotebookClient

    NotebookClient(nb, timeout=300, kernel_name=live.KERNEL_NAME).execute()
    assert "started without Nsight Compute (No NVIDIA GPU is visible" in outputs(nb.cells[0])


@pytest.mark.slow
def test_the_optimize_loops_profiler_starts_each_next_process_ahead_and_runs_the_next_version_there(
    fake_gpu, monkeypatch, tmp_path
):
    monkeypatch.setenv("FAKE_NCU", "ok")
    settings = Settings(ncu_path=str(FAKE / "ncu"))
    profiler = NcuProfiler(ahead=True)
    try:
        profiler.collect(ADD, settings, output=tmp_path / "v000")
        waiting = profiler._next
        assert waiting is not None and waiting.running.proc.poll() is None  # started, waiting for its cell
        marker = tmp_path / "ran"
        version = ADD.text.replace("1024", "512") + f"\nopen({str(marker)!r}, 'w').write('here')\n"
        profile = profiler.collect(CellSource(version), settings, output=tmp_path / "v001")
        argv = json.loads(fake_gpu.read_text())
        assert argv[argv.index("kernel_lab.profiling.runner") + 1] == "--wait-for"  # the process started ahead ...
        assert marker.read_text() == "here" and (tmp_path / "v001.ncu-rep").exists()  # ... ran the version
        assert [k.name for k in profile.kernels] == ["add_kernel"] and waiting.running.proc.poll() is not None
        with pytest.raises(CellError, match="ZeroDivisionError"):  # a version that fails there says so, in a line
            profiler.collect(CellSource(ADD.text + "\n1 / 0\n"), settings)
        last = profiler._next
        assert last is not None and last is not waiting
    finally:
        profiler.close()
    assert last.running.proc.wait(timeout=30) is not None and profiler._next is None  # killed (reaped in the background)


@pytest.mark.slow
def test_optimize_after_profile_starts_from_that_profile_and_only_for_the_same_code(fake_gpu, tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(f"%load_ext kernel_lab\n%config KernelLabMagics.ncu_path = {str(FAKE / 'ncu')!r}"),
        nbformat.v4.new_code_cell("%%profile\n" + ADD.text),
        nbformat.v4.new_code_cell(f"%%optimize --rounds 1 --candidates 1 --root {tmp_path / 'same'}\n" + ADD.text),
        nbformat.v4.new_code_cell(
            f"%%optimize --rounds 1 --candidates 1 --root {tmp_path / 'edited'}\n" + ADD.text + "\n# edited\n"
        ),
    ]
    execute(nb)
    assert "round 1 started from the profile this cell already had (ncu 2025.3.1.0 command line)" in outputs(nb.cells[2])
    assert "started from the profile" not in outputs(nb.cells[3])  # other code: profiled anew
    (same,) = (tmp_path / "same").iterdir()
    assert (same / "v000" / "profile.ncu-rep").read_bytes() == samples.report("memory_bound").read_bytes()


@pytest.mark.slow
def test_a_second_profile_in_a_fresh_process_runs_in_the_process_the_first_one_started(fake_gpu, tmp_path):
    marker = tmp_path / "argv.txt"
    cell = ADD.text + f"\nimport sys\nopen({str(marker)!r}, 'a').write(' '.join(sys.argv) + '\\n')\n"
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(f"%load_ext kernel_lab\n%config KernelLabMagics.ncu_path = {str(FAKE / 'ncu')!r}"),
        nbformat.v4.new_code_cell("%%profile\n" + cell),  # the stand-in ncu runs nothing here, and starts the next
        nbformat.v4.new_code_cell("%%profile\n" + cell.replace("1024", "512")),  # ... which runs this one
        nbformat.v4.new_code_cell("%config KernelLabMagics.profile_ahead = False"),
        nbformat.v4.new_code_cell("%%profile\n" + cell),  # a fresh process again: the stand-in runs nothing
    ]
    execute(nb)
    ran = marker.read_text().splitlines()
    assert len(ran) == 1 and "--wait-for" in ran[0]  # the cell's module ran once (then run() twice), there
    assert all("Profiled 1 kernel launch(es)" in outputs(c) for c in (nb.cells[1], nb.cells[2], nb.cells[4]))
