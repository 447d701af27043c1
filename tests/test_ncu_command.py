"""Building the ncu command, finding kernels in source, parsing ncu's progress output."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from conftest import SAMPLES, has_gpu

from kernel_lab.errors import NcuNotFoundError, NoGpuError
from kernel_lab.profiling import ncu
from kernel_lab.profiling.sections import DEFAULT_SECTIONS, EXTRA_METRICS


def test_build_command_is_exact():
    cmd = ncu.build_command(
        "/opt/ncu",
        Path("/w/cell.py"),
        Path("/w/out"),
        kernel_regex="regex:^(add_kernel)(<.*)?$",
        sections=("SpeedOfLight", "Occupancy"),
        metrics=("dram__bytes.sum.peak_sustained",),
        launch_count=3,
    )
    assert cmd == [
        "/opt/ncu",
        "--clock-control",
        "none",
        "--import-source",
        "yes",
        "--nvtx",
        "--nvtx-include",
        "kernel_lab@profile/",
        "-k",
        "regex:^(add_kernel)(<.*)?$",
        "-c",
        "3",
        "--section",
        "SpeedOfLight",
        "--section",
        "Occupancy",
        "--metrics",
        "dram__bytes.sum.peak_sustained",
        "-f",
        "-o",
        "/w/out",
        sys.executable,
        "-m",
        "kernel_lab.profiling.runner",
        "/w/cell.py",
    ]


def test_default_command_uses_targeted_sections_and_a_set_replaces_them():
    default = ncu.build_command("ncu", Path("c.py"), Path("o"))
    assert default.count("--section") == len(DEFAULT_SECTIONS)
    assert ",".join(EXTRA_METRICS) in default
    full = ncu.build_command("ncu", Path("c.py"), Path("o"), section_set="full", metrics=(), warmup=False)
    assert "--section" not in full and full[full.index("--set") + 1] == "full"
    assert full[-1] == "--no-warmup"


def test_kernel_names_found_in_triton_and_cuda_source():
    source = '''
@triton.autotune(configs=[triton.Config({"B": 64})], key=["n"])
@triton.jit
def tuned(x, n, B: tl.constexpr):
    pass

@triton.jit(do_not_specialize=["n"])
def plain_k(x, n):
    pass

CUDA = r"""
template <int T> __global__ void __launch_bounds__(256) tmpl_kernel(float* a) {}
__global__ void simple(const float* in, float* out, int n) {}
__device__ float helper(float x) { return x; }
"""
'''
    assert ncu.kernel_names(source) == ["tuned", "plain_k", "tmpl_kernel", "simple"]


def test_kernel_filter_matches_whole_names_and_templates():
    value = ncu.kernel_filter(["add_kernel", "tmpl"])
    pattern = re.compile(value.removeprefix("regex:"))
    assert pattern.match("add_kernel") and pattern.match("tmpl<32>")
    assert not pattern.match("add_kernel_2") and not pattern.match("vectorized_elementwise_kernel")


@pytest.mark.parametrize("cell", sorted((SAMPLES / "kernels").glob("*.py")), ids=lambda p: p.stem)
def test_every_sample_cell_names_its_kernels(cell):
    assert ncu.kernel_names(cell.read_text()), f"no kernel found in {cell.name}"


def test_progress_parser_follows_dots_as_they_arrive():
    parser = ncu.ProgressParser()
    text = '==PROF== Connected to process 1\n==PROF== Profiling "add_kernel": 0%....50%....100% - 10 passes\n==PROF== Profiling "k2" - 1: 0%..'
    events = [e for ch in text for e in parser.feed(ch)]
    first = [e for e in events if e.kernel == "add_kernel"]
    assert [e.percent for e in first[:-1]] == list(range(0, 101, 10))
    assert first[-1].passes == 10 and first[-1].number == 1
    assert [(e.kernel, e.number, e.percent) for e in events if e.kernel == "k2"] == [("k2", 2, 0), ("k2", 2, 10), ("k2", 2, 20)]


def test_explicit_ncu_path_that_does_not_exist_says_what_to_do(monkeypatch):
    monkeypatch.setenv("KERNEL_LAB_NCU", "/nowhere/ncu")
    with pytest.raises(NcuNotFoundError, match="KERNEL_LAB_NCU"):
        ncu.find_ncu()


def test_no_ncu_on_path_suggests_install_or_replay(monkeypatch, tmp_path):
    monkeypatch.delenv("KERNEL_LAB_NCU", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(ncu, "_COMMON_PLACES", ())
    with pytest.raises(NcuNotFoundError, match="--replay"):
        ncu.find_ncu()


@pytest.mark.skipif(has_gpu(), reason="this machine has a GPU")
def test_no_gpu_is_explained_with_the_replay_way_out():
    with pytest.raises(NoGpuError) as err:
        ncu.require_gpu()
    assert "--replay" in str(err.value) and "\n" not in str(err.value)
