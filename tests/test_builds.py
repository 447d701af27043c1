"""Each cell source builds its load_inline modules in its own folder, so builds are reused."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import run_python

CELL = "# a CUDA cell would call load_inline here\nimport os\nprint('BUILDS', os.environ['TORCH_EXTENSIONS_DIR'])\n"


def test_cells_get_their_own_build_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCH_EXTENSIONS_DIR", str(tmp_path))
    from kernel_lab import builds

    builds.build_root.cache_clear()
    try:
        a, again, b = (builds.use_folder_for(f"load_inline({cell!r})") for cell in ("a", "a", "b"))
        assert a == again != b and a.parent == b.parent == tmp_path / "kernel_lab"
        assert os.environ["TORCH_EXTENSIONS_DIR"] == str(b)
        assert builds.use_folder_for("triton only") is None and os.environ["TORCH_EXTENSIONS_DIR"] == str(b)
    finally:
        builds.build_root.cache_clear()


@pytest.mark.slow
def test_the_profiled_cell_builds_in_its_folder(tmp_path):
    cell = tmp_path / "cell.py"
    cell.write_text(CELL)
    proc = run_python("-m", "kernel_lab.profiling.runner", str(cell), env={"TORCH_EXTENSIONS_DIR": str(tmp_path / "ext")})
    assert proc.returncode == 0, proc.stderr
    (line,) = [s for s in proc.stdout.splitlines() if s.startswith("BUILDS")][:1]
    folder = line.split(" ", 1)[1]
    assert folder.startswith(str(tmp_path / "ext" / "kernel_lab")) and folder != str(tmp_path / "ext" / "kernel_lab")


@pytest.mark.slow
def test_the_judge_builds_each_version_in_its_folder(tmp_path, monkeypatch):
    from kernel_lab.verify import verify, workers

    workers.clear()  # processes an earlier test started ahead hold that test's environment
    monkeypatch.setenv("TORCH_EXTENSIONS_DIR", str(tmp_path))
    seen = tmp_path / "seen.txt"
    cell = (
        "# load_inline would build here\nimport os, torch\n"
        "FOLDER = os.environ['TORCH_EXTENSIONS_DIR']\n"
        f"open({str(seen)!r}, 'a').write(FOLDER + '\\n')\n"
        "def make_inputs():\n    return (torch.randn(64),)\n"
        "def run(x):\n    return x * 2{tail}\n"
    )
    verdict = verify(cell.format(tail=""), cell.format(tail=" + 0"), seeds=1, device="cpu", time=False)
    assert verdict.correct, verdict.reason
    folders = set(seen.read_text().split())
    root = tmp_path / "kernel_lab"
    assert len(folders) == 2 and all(Path(f).parent == root for f in folders)  # one folder per version, none shared
