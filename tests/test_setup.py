"""Set-up leaves the checkout as it was: the extension's packages come from its lock file with ``npm ci``, which
needs the lock to hold every package ``npm install`` would write into it (npm install rewrote an incomplete one)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SETUP = (ROOT / "scripts" / "setup.sh").read_text()


def test_setup_installs_the_extension_s_packages_with_npm_ci_before_the_build_hook_runs():
    steps = [line.strip() for line in SETUP.splitlines() if not line.lstrip().startswith("#")]
    ci = next(i for i, line in enumerate(steps) if "npm ci" in line)
    pip = next(i for i, line in enumerate(steps) if "pip install -e" in line)
    assert ci < pip and "cd extension" in steps[ci]
    assert not any("npm install" in line for line in steps)


@pytest.mark.skipif(not shutil.which("npm"), reason="npm not installed (Node.js 20.19+)")
def test_the_lock_file_is_complete_for_npm_ci(tmp_path):
    """``npm ci`` refuses a lock that does not match package.json; --dry-run --offline checks it without a download."""
    for name in ("package.json", "package-lock.json"):
        shutil.copy(ROOT / "extension" / name, tmp_path / name)
    proc = subprocess.run(
        ["npm", "ci", "--dry-run", "--offline", "--ignore-scripts", "--no-audit", "--no-fund"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert (tmp_path / "package-lock.json").read_bytes() == (ROOT / "extension" / "package-lock.json").read_bytes()


def test_the_readme_says_to_use_a_virtual_environment_and_that_set_up_may_run_apt_get_as_root():
    readme = (ROOT / "README.md").read_text()
    setup = readme[readme.index("## Set-up and tests") : readme.index("## A 1-minute tour")]
    assert "python3 -m venv" in setup and "virtual environment" in setup
    assert "as root" in setup and "apt-get install chromium" in setup and "npm ci" in setup
