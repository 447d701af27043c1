"""Screenshots of what a person sees in JupyterLab, at laptop size and on a large screen.

    python scripts/screenshots.py OUT_DIR [NOTEBOOK ...]

Starts a headless JupyterLab on 127.0.0.1 over a temporary folder, opens each notebook (default: a small
one with %%profile and %%optimize in replay mode), runs all cells and saves OUT_DIR/<name>-<width>.png at
1366x768 and 1920x1080. Needs Chromium (scripts/setup.sh installs it) and the dev dependencies.
"""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
SIZES = ((1366, 768), (1920, 1080))


def demo() -> nbformat.NotebookNode:
    from kernel_lab import samples

    nb = nbformat.v4.new_notebook(metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}})
    nb.cells = [
        nbformat.v4.new_code_cell("%load_ext kernel_lab"),
        nbformat.v4.new_code_cell(f"%%profile --replay {samples.report('uncoalesced_global')}\n# the strided copy sample"),
        nbformat.v4.new_code_cell(
            f"%%optimize --replay {samples.report('memory_bound')} --rounds 1 --candidates 2 --root optimized\n"
            + (ROOT / "tests" / "cells" / "add_ref.py").read_text()
        ),
    ]
    return nb


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    root = Path(tempfile.mkdtemp(prefix="kernel_lab_shots_"))
    names = []
    for given in sys.argv[2:]:
        shutil.copy(given, root / Path(given).name)
        names.append(Path(given).name)
    if not names:
        nbformat.write(demo(), root / "demo.ipynb")
        names = ["demo.ipynb"]
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    token = secrets.token_hex(16)
    news = root / ".settings" / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings"
    news.parent.mkdir(parents=True)
    news.write_text('{"fetchNews": "false", "checkForUpdates": false}')  # no "get notified?" toast over the output
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "jupyterlab",
            "--no-browser",
            "--allow-root",
            "--ip=127.0.0.1",
            f"--port={port}",
            f"--IdentityProvider.token={token}",
            f"--ServerApp.root_dir={root}",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=root,
        env={**os.environ, "JUPYTERLAB_SETTINGS_DIR": str(root / ".settings")},
    )
    try:
        for _ in range(200):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/lab?token={token}", timeout=5)
                break
            except OSError:
                time.sleep(0.3)
        from playwright.sync_api import sync_playwright

        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, headless=True)
            for name in names:
                page = browser.new_page(viewport={"width": SIZES[0][0], "height": SIZES[0][1]})
                page.goto(f"http://127.0.0.1:{port}/lab/workspaces/{Path(name).stem}/tree/{name}?token={token}")  # one tab each
                page.get_by_text("| Idle").first.wait_for(timeout=120_000)
                page.locator(".jp-NotebookPanel:visible").first.click()
                page.get_by_role("menuitem", name="Run").click()
                page.get_by_text("Run All Cells", exact=True).click()
                time.sleep(5)
                deadline = time.monotonic() + 600
                while page.locator(".jp-InputArea-prompt", has_text="[*]").count() and time.monotonic() < deadline:
                    time.sleep(1)  # a cell still running shows [*]
                time.sleep(3)
                for width, height in SIZES:
                    page.set_viewport_size({"width": width, "height": height})
                    time.sleep(1)
                    page.screenshot(path=str(out / f"{Path(name).stem}-{width}.png"), full_page=False)
                    for i, cell in enumerate(page.locator(".jp-Cell").all()[1:], 1):
                        output = cell.locator(".jp-Cell-outputArea")
                        box = output.first.bounding_box() if output.count() else None
                        if box and box["height"] > 2:  # a cell without output has an empty, hidden area
                            output.first.screenshot(path=str(out / f"{Path(name).stem}-{width}-output{i}.png"))
            browser.close()
    finally:
        server.terminate()
        server.wait(15)


if __name__ == "__main__":
    main()
