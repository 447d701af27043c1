"""The code stays lint-clean, formatted and type-checked (ruff on kernel_lab/, benchmarks/ and scripts/, mypy as configured in
pyproject.toml); CI runs this with the rest of the suite."""

from __future__ import annotations

import subprocess
import sys

from conftest import ROOT


def run(*command: str) -> subprocess.CompletedProcess:
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)


def test_ruff_lint_and_format():
    lint = run("ruff", "check", "kernel_lab", "benchmarks", "scripts")
    assert lint.returncode == 0, lint.stdout + lint.stderr
    formatted = run("ruff", "format", "--check", "kernel_lab", "benchmarks", "scripts")
    assert formatted.returncode == 0, formatted.stdout + formatted.stderr


def test_mypy():
    checked = run(sys.executable, "-m", "mypy")
    assert checked.returncode == 0, checked.stdout + checked.stderr
