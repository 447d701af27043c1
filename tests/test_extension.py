"""The JupyterLab extension (extension/) for real: a JupyterLab server, a kernel, headless Chromium.

A notebook's cells open comms to the ``kernel_lab`` target the way Kernel Lab's kernel side does;
the test reads the answers and the cells' text off the page.
"""
from __future__ import annotations

import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
VERSION = json.loads((ROOT / "extension" / "package.json").read_text())["version"]
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
SETUP = "run `bash scripts/setup.sh` (it installs jupyterlab, playwright, Chromium and the extension)"

# Shared by the cells: send one request, show its answer as a line of the cell's output.
ASK = """\
import json
from comm import create_comm
from IPython.display import Pretty, display

def ask(data):
    shown = display(Pretty(f"{data['action']}: no answer"), display_id=True)
    comm = create_comm(target_name="kernel_lab", data=data)
    comm.on_msg(lambda msg: shown.update(Pretty(f"{data['action']}: " + json.dumps(msg["content"]["data"], sort_keys=True))))

parent = get_ipython().kernel.get_parent()
print("cellId:", parent["metadata"].get("cellId"))
"""
SET = ASK + """\
ask({"action": "hello"})
ask({"action": "set_cell", "cell_id": parent["metadata"]["cellId"], "source": NEW, "expect": parent["content"]["code"]})
""".replace("NEW", repr("# set by the kernel\nprint('new text')"))
REFUSE = """\
parent = get_ipython().kernel.get_parent()
print("cellId:", parent["metadata"].get("cellId"))
ask({"action": "set_cell", "cell_id": parent["metadata"]["cellId"], "source": "# must not appear", "expect": "# not this text"})
ask({"action": "set_cell", "cell_id": "no-such-cell", "source": "# must not appear", "expect": None})
ask({"action": "launch"})
"""


def _require() -> None:
    """Fail, saying how to install them, when the browser test's tools are missing."""
    if not Path(CHROMIUM).exists():
        pytest.fail(f"Chromium not found (Debian: apt-get install chromium); {SETUP}")
    for module in ("jupyterlab", "playwright"):
        try:
            __import__(module)
        except ImportError:
            pytest.fail(f"Python package {module} not installed; {SETUP}")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """A headless JupyterLab on 127.0.0.1 serving a notebook with the two test cells: (notebook URL)."""
    _require()
    root = tmp_path_factory.mktemp("lab")
    nb = nbformat.v4.new_notebook(metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}})
    nb.cells = [nbformat.v4.new_code_cell(SET, id="cell-set"), nbformat.v4.new_code_cell(REFUSE, id="cell-refuse")]
    nbformat.write(nb, root / "bridge.ipynb")
    port, token = _free_port(), secrets.token_hex(16)
    log = open(root / "server.log", "w")
    server = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root", "--ip=127.0.0.1", f"--port={port}",
         f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}",
         f"--LabApp.user_settings_dir={root / 'settings'}", f"--LabApp.workspaces_dir={root / 'workspaces'}"],
        stdout=log, stderr=subprocess.STDOUT, cwd=root, env={**os.environ, "JUPYTER_RUNTIME_DIR": str(root / "runtime")},
    )
    base = f"http://127.0.0.1:{port}"
    try:
        page = _wait_for(f"{base}/lab?token={token}", server, root / "server.log")
        if '"kernel-lab"' not in page:
            pytest.fail(f"JupyterLab does not load the kernel-lab extension; {SETUP}")
        yield f"{base}/lab/tree/bridge.ipynb?token={token}"
    finally:
        server.terminate()
        try:
            server.wait(15)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()


def _wait_for(url: str, server: subprocess.Popen, log: Path, timeout: float = 60) -> str:
    """The text of ``url`` once the server answers it."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            pytest.fail(f"jupyter lab exited ({server.returncode}):\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(url, timeout=5) as r:
                return r.read().decode()
        except OSError:
            time.sleep(0.3)
    pytest.fail(f"jupyter lab did not answer in {timeout:.0f} s:\n{log.read_text()[-3000:]}")


def _text(cell) -> str:
    """The text in the cell's editor, as the page shows it."""
    return cell.locator(".cm-content").evaluate(
        "e => Array.from(e.querySelectorAll('.cm-line'), line => line.textContent).join('\\n')")


def _text_becomes(cell, text: str, timeout: float = 30) -> str:
    """The cell's editor text, once it is ``text`` or when ``timeout`` passed."""
    deadline = time.monotonic() + timeout
    while (now := _text(cell)) != text and time.monotonic() < deadline:
        time.sleep(0.2)
    return now


def test_kernel_sets_and_is_refused_cell_text(lab):
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True)
        try:
            page = browser.new_page()
            page.goto(lab)
            cells = page.locator(".jp-NotebookPanel .jp-Notebook .jp-Cell")
            expect(cells).to_have_count(2, timeout=60_000)
            first, second = cells.nth(0), cells.nth(1)
            expect(page.locator(".jp-Notebook-ExecutionIndicator[data-status='idle']")).to_be_visible(timeout=60_000)
            assert _text_becomes(first, SET) == SET

            first.locator(".jp-InputPrompt").click()
            page.keyboard.press("Shift+Enter")  # runs the first cell and selects the second
            page.keyboard.press("Control+Enter")

            out1, out2 = first.locator(".jp-OutputArea"), second.locator(".jp-OutputArea")
            # JupyterLab sends the cell's model id in the execute request's metadata.
            expect(out1).to_contain_text("cellId: cell-set", timeout=30_000)
            expect(out1).to_contain_text(f'hello: {{"extension": "{VERSION}", "ok": true}}', timeout=30_000)
            expect(out1).to_contain_text('set_cell: {"ok": true}')
            new = "# set by the kernel\nprint('new text')"
            assert _text_becomes(first, new) == new

            expect(out2).to_contain_text("cellId: cell-refuse")
            expect(out2).to_contain_text('set_cell: {"error": "the cell was edited since', timeout=30_000)
            expect(out2).to_contain_text('set_cell: {"error": "no cell with id no-such-cell')
            expect(out2).to_contain_text('launch: {"error": "unknown action \\"launch\\"", "ok": false}')
            assert _text(second) == REFUSE

            # The edit is one step of the editor's undo history.
            first.locator(".cm-content").click()
            page.keyboard.press("Control+z")
            assert _text_becomes(first, SET) == SET
        finally:
            browser.close()
