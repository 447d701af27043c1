"""The kernel-lab command line, run as a user would run it."""

from __future__ import annotations

import json

import pytest
from conftest import has_gpu, run_python

from kernel_lab import samples
from kernel_lab.models import KINDS

pytestmark = pytest.mark.slow  # every test runs the CLI in its own Python


def cli(*args: str):
    return run_python("-m", "kernel_lab.cli", *args)


def test_diagnose_json_lists_kernels_with_ranked_bottlenecks():
    proc = cli("diagnose", str(samples.report("uncoalesced_global")), "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert [k["kernel"] for k in data] == ["strided_copy_kernel"]
    kinds = [b["kind"] for b in data[0]["bottlenecks"]]
    assert kinds[0] == "uncoalesced_global" and set(kinds) <= set(KINDS)


def test_diagnose_text_says_it_is_replaying():
    proc = cli("diagnose", str(samples.report("shared_bank_conflicts")))
    assert proc.returncode == 0, proc.stderr
    assert "REPLAYING the recorded report" in proc.stdout
    assert "[shared_bank_conflicts]" in proc.stdout


def test_diagnose_a_broken_report_fails_with_one_line(tmp_path):
    bad = tmp_path / "broken.ncu-rep"
    bad.write_bytes(samples.report("memory_bound").read_bytes()[:2000])
    proc = cli("diagnose", str(bad))
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "truncated" in proc.stderr


@pytest.mark.skipif(has_gpu(), reason="checks the no-GPU message")
def test_profile_without_gpu_explains_and_offers_replay():
    proc = cli("profile", str(samples.cell("memory_bound")))
    assert proc.returncode == 2
    assert "No NVIDIA GPU" in proc.stderr and "--replay" in proc.stderr
