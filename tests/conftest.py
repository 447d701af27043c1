"""Shared test helpers. Fixtures are real reports recorded on an H100 (kernel_lab/samples/).

Markers: ``gpu``, a test that needs an NVIDIA GPU and ncu (skipped without them), and ``slow``, a test that starts a
Python process that imports torch (a sandbox, a screen worker, the profiling runner, the CLI, a notebook kernel, a
Jupyter server, Ray) or a browser. ``python3 -m pytest -m "not slow"`` is the fast run (README, "Set-up and tests").
A test is slow by its own marker, its module's, or by using a fixture of :data:`SLOW_FIXTURES`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import zmq_polls

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "kernel_lab" / "samples"


def has_gpu() -> bool:
    smi = shutil.which("nvidia-smi")
    return bool(smi) and subprocess.run([smi, "-L"], check=False, capture_output=True, text=True).stdout.startswith("GPU")


def has_ncu() -> bool:
    from kernel_lab.errors import NcuNotFoundError
    from kernel_lab.profiling.ncu import find_ncu

    try:
        return bool(find_ncu())
    except NcuNotFoundError:
        return False


#: The tests' environment, unless the caller's says otherwise (the processes the tests start inherit it): one thread
#: per torch process, as the judge's and the interpreter's tensors are tiny and two threads a process only spin
#: against each other on two cores (a course test: 3m54 s of CPU with two, 3m15 s with one); without a GPU, a screen
#: of 8 launch configurations a round where the screen is not the subject (tests of the screen give their own).
zmq_polls.install()  # nbclient in the tests: a missed zmq wake-up costs a second, not a cell's timeout

TEST_ENVIRONMENT = {"OMP_NUM_THREADS": "1", **({} if has_gpu() else {"KERNEL_LAB_SCREEN": "8"})}
for _name, _value in TEST_ENVIRONMENT.items():
    os.environ.setdefault(_name, _value)


#: fixtures that start such processes for the tests that use them: tests/test_verify.py's hostile cells, judged
SLOW_FIXTURES = frozenset({"verdicts"})


def pytest_collection_modifyitems(config, items):
    for item in items:
        if SLOW_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)
    if has_gpu() and has_ncu():
        return
    skip = pytest.mark.skip(reason="needs an NVIDIA GPU and ncu")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def sample():
    """Path of a recorded sample report by its kind name."""

    def path(name: str) -> Path:
        p = SAMPLES / f"{name}.ncu-rep"
        assert p.exists(), f"missing fixture {p}"
        return p

    return path


def run_python(*args: str, env: dict | None = None, cwd: Path | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    """Run ``python -m ...`` with this interpreter and the repo importable."""
    path = os.pathsep.join(filter(None, (str(ROOT), os.environ.get("PYTHONPATH"))))
    full_env = {**os.environ, "PYTHONPATH": path, **(env or {})}
    return subprocess.run(
        [sys.executable, *args], check=False, capture_output=True, text=True, env=full_env, cwd=cwd, timeout=timeout
    )


H200 = ROOT / "tests" / "data" / "h200"


@pytest.fixture(scope="session")
def h200(tmp_path_factory):
    """The reports recorded on the H200 (tests/data/h200), unpacked once and checked against their digests: the
    path of a cell's report by its name (its launch record lies beside it)."""
    import hashlib
    import tarfile

    folder = tmp_path_factory.mktemp("h200")
    with tarfile.open(H200 / "records.tar.xz") as archive:
        archive.extractall(folder, filter="data")
    for line in (H200 / "reports.sha256").read_text().splitlines():
        digest, name = line.split()
        assert hashlib.sha256((folder / name).read_bytes()).hexdigest() == digest, f"{name} is not as recorded"

    def path(name: str) -> Path:
        return folder / f"{name}.ncu-rep"

    return path
