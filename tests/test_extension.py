"""The JupyterLab extension (extension/) for real: a JupyterLab server, a kernel, headless Chromium.

A notebook's cells open comms to the ``kernel_lab`` target the way Kernel Lab's kernel side does, and
the %%optimize panel's buttons are clicked; the tests read the answers and the cells' text off the page.
"""

from __future__ import annotations

import json
import os
import re
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

from kernel_lab import samples

pytestmark = pytest.mark.slow  # a Jupyter server, its kernels and Chromium

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
NEW = "# set by the kernel\nprint('new text')"
SET = (
    ASK
    + """\
ask({"action": "hello"})
ask({"action": "set_cell", "cell_id": parent["metadata"]["cellId"], "source": NEW, "expect": parent["content"]["code"]})
""".replace("NEW", repr(NEW))
)
REFUSE = """\
parent = get_ipython().kernel.get_parent()
print("cellId:", parent["metadata"].get("cellId"))
ask({"action": "set_cell", "cell_id": parent["metadata"]["cellId"], "source": "# must not appear", "expect": "# not this text"})
ask({"action": "set_cell", "cell_id": "no-such-cell", "source": "# must not appear", "expect": None})
ask({"action": "launch"})
"""
# The %%optimize panel over a session with a faster version, for the cell that shows it.
FAST = "def run(x):\n    return x + 1  # faster\n"
PANEL = f"""\
from kernel_lab.frontend import running_cell
from kernel_lab.results.optimize import OptimizeResult
from kernel_lab.session import Session
s = Session.create("sessions", "add", "def run(x):\\n    return x + 1\\n")
s.add({FAST!r}, origin="search", parent=0, correct=True, speedup=2.0, significant=True)
OptimizeResult(s, "ran 1 round(s)", cell=running_cell())
"""

# The whole flow: %%optimize in replay mode on the CPU, then Apply from its panel.
OPTIMIZE = (
    f"%%optimize --replay {samples.report('memory_bound')} --rounds 1 --candidates 1 --root optimized\n"
    + (ROOT / "tests" / "cells" / "add_ref.py").read_text()
)


# What a person sees, at laptop size and on a large screen: the dashboard of a profile and the panel.
VIEWS = {"cell-load": "%load_ext kernel_lab", "cell-profile": f"%%profile --replay {samples.report('uncoalesced_global')}"}
SIZES = ((1366, 768), (1920, 1080))
# Elements of a cell's output wider than the output itself (what makes a reader scroll sideways): only a
# scroll box of Kernel Lab's own (a long code line in the diff) may hold them, not JupyterLab's output box.
OVERFLOW = """out => {
  const right = out.getBoundingClientRect().right + 1;
  return Array.from(out.querySelectorAll('*')).filter(e => {
    const r = e.getBoundingClientRect();
    if (!r.width || r.right <= right) return false;
    for (let p = e.parentElement; p && p !== out; p = p.parentElement) {
      const style = getComputedStyle(p);
      if (p.classList.contains('jp-OutputArea-output')) break;
      if (['auto', 'scroll', 'hidden'].includes(style.overflowX) && p.getBoundingClientRect().right <= right) return false;
    }
    return true;
  }).slice(0, 5).map(e => `${e.tagName.toLowerCase()}.${e.className}: right edge ${Math.round(e.getBoundingClientRect().right)} > ${Math.round(right)}`);
}"""


def _require() -> None:
    """Fail, saying how to install them, when the browser test's tools are missing."""
    if not Path(CHROMIUM).exists():
        pytest.skip(f"no browser can start here: Chromium not found (Debian: apt-get install chromium); {SETUP}")
    for module in ("jupyterlab", "notebook", "playwright"):
        try:
            __import__(module)
        except ImportError:
            pytest.fail(f"Python package {module} not installed; {SETUP}")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


NOTEBOOKS = {
    "bridge": {"cell-set": SET, "cell-refuse": REFUSE},
    "panel": {"cell-panel": PANEL},
    "magic": {"cell-load": "%load_ext kernel_lab", "cell-optimize": OPTIMIZE},
    "views": {**VIEWS, "cell-panel": PANEL},
}


def _serve(root: Path, app: str):
    """A headless Jupyter server (``app``: "jupyterlab" or "notebook") on 127.0.0.1 over the test notebooks
    in ``root``; yields the URL of notebook NAME as ``url(NAME)``."""
    for name, cells in NOTEBOOKS.items():
        nb = nbformat.v4.new_notebook(
            metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}}
        )
        nb.cells = [nbformat.v4.new_code_cell(source, id=cell_id) for cell_id, source in cells.items()]
        nbformat.write(nb, root / f"{name}.ipynb")
    port, token = _free_port(), secrets.token_hex(16)
    with open(root / "server.log", "w") as log:
        server = subprocess.Popen(
            [
                sys.executable,
                "-m",
                app,
                "--no-browser",
                "--allow-root",
                "--ip=127.0.0.1",
                f"--port={port}",
                f"--IdentityProvider.token={token}",
                f"--ServerApp.root_dir={root}",
                f"--LabApp.user_settings_dir={root / 'settings'}",
                f"--LabApp.workspaces_dir={root / 'workspaces'}",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=root,
            env={**os.environ, "JUPYTER_RUNTIME_DIR": str(root / "runtime")},
        )
        base = f"http://127.0.0.1:{port}"
        try:
            page = _wait_for(f"{base}/{'lab' if app == 'jupyterlab' else 'tree'}?token={token}", server, root / "server.log")
            if '"kernel-lab"' not in page:
                pytest.fail(f"{app} does not load the kernel-lab extension; {SETUP}")
            if app == "jupyterlab":
                url = lambda name: f"{base}/lab/workspaces/{name}/tree/{name}.ipynb?token={token}"  # noqa: E731 - a workspace each
            else:
                url = lambda name: f"{base}/notebooks/{name}.ipynb?token={token}"  # noqa: E731
            url.root = root
            yield url
        finally:
            server.terminate()
            try:
                server.wait(15)
            except subprocess.TimeoutExpired:
                server.kill()


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """JupyterLab with the test notebooks: the URL of notebook NAME is ``lab(NAME)``."""
    _require()
    yield from _serve(tmp_path_factory.mktemp("lab"), "jupyterlab")


@pytest.fixture(scope="module")
def notebook7(tmp_path_factory):
    """Jupyter Notebook 7 (what the classic Notebook became) with the same notebooks."""
    _require()
    yield from _serve(tmp_path_factory.mktemp("notebook"), "notebook")


def _wait_for(url: str, server: subprocess.Popen, log: Path, timeout: float = 60) -> str:
    """The text of ``url`` once the server answers it."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            pytest.fail(f"the Jupyter server exited ({server.returncode}):\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(url, timeout=5) as r:
                return r.read().decode()
        except OSError:
            time.sleep(0.3)
    pytest.fail(f"the Jupyter server did not answer in {timeout:.0f} s:\n{log.read_text()[-3000:]}")


def _text(cell) -> str:
    """The text in the cell's editor, as the page shows it."""
    return cell.locator(".cm-content").evaluate(
        "e => Array.from(e.querySelectorAll('.cm-line'), line => line.textContent).join('\\n')"
    )


def _text_becomes(cell, text: str, timeout: float = 30) -> str:
    """The cell's editor text, once it is ``text`` or when ``timeout`` passed."""
    deadline = time.monotonic() + timeout
    while (now := _text(cell)) != text and time.monotonic() < deadline:
        time.sleep(0.2)
    return now


@pytest.fixture(scope="module")
def browser():
    _require()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        try:
            chromium = p.chromium.launch(executable_path=CHROMIUM, headless=True)
        except Exception as exc:  # noqa: BLE001 - a browser that cannot start here skips the browser tests
            pytest.skip(f"Chromium could not start here: {str(exc).splitlines()[0]}")
        yield chromium
        chromium.close()


# Idle once the kernel is connected: JupyterLab's status bar (its toolbar's indicator says so before);
# Notebook 7 has no status bar, only the toolbar's indicator.
IDLE = {
    "lab": lambda page: page.locator(".jp-StatusBar-Widget").get_by_text("| Idle"),
    "notebook7": lambda page: page.locator(".jp-Notebook-ExecutionIndicator[data-status='idle']"),
}


def _open(browser, url: str, cells: int, size: tuple[int, int] = (1280, 720), app: str = "lab"):
    """A new page (``size`` wide and high) showing the notebook at ``url`` with its kernel idle, and its cells."""
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": size[0], "height": size[1]})
    page.goto(url)
    found = page.locator(".jp-NotebookPanel .jp-Notebook .jp-Cell")
    expect(found).to_have_count(cells, timeout=60_000)
    expect(IDLE[app](page).first).to_be_visible(timeout=60_000)
    return page, found


# Watches a cell's prompt from before its run: every text it shows goes into its data-kl-seen attribute.
WATCH = """prompt => {
  prompt.dataset.klSeen = '';
  prompt.klWatch?.disconnect();
  prompt.klWatch = new MutationObserver(() => { prompt.dataset.klSeen += '|' + prompt.textContent.trim(); });
  prompt.klWatch.observe(prompt, {childList: true, characterData: true, subtree: true});
}"""
RUN = ".jp-NotebookPanel-toolbar [data-command='notebook:run-cell-and-select-next']"


def _run(page, cell, timeout: float = 60) -> None:
    """Runs ``cell`` from the toolbar and waits until it has run: selected first (its prompt clicked, the cell
    active), then its prompt seen busy ("[*]:", which JupyterLab shows as it handles the click) and numbered again.
    On a busy machine a page can drop a click, or take one while it redraws: each cell waits for the one before
    it, and a click after which the prompt is neither busy nor renumbered within 10 s is made again."""
    from playwright.sync_api import expect

    prompt = cell.locator(".jp-InputPrompt")
    prompt.click()
    expect(cell).to_have_class(re.compile(r"\bjp-mod-active\b"), timeout=30_000)
    before = prompt.inner_text().strip()
    prompt.evaluate(WATCH)
    for clicks in range(1, 4):
        page.locator(RUN).click()
        try:
            expect(prompt).to_have_attribute("data-kl-seen", re.compile(r"\[\*\]"), timeout=10_000)
            break
        except AssertionError:  # not seen busy: it ran unseen (a new number), or the click was lost
            now = prompt.inner_text().strip()
            if now != before and re.fullmatch(r"\[\d+\]:", now):
                break
            if clicks == 3:
                raise AssertionError("the cell never started running: three clicks on the toolbar's run were lost") from None
            prompt.click()
    expect(prompt).to_have_text(re.compile(r"^\[\d+\]:$"), timeout=timeout * 1000)


def test_kernel_sets_and_is_refused_cell_text(lab, browser):
    from playwright.sync_api import expect

    page, cells = _open(browser, lab("bridge"), 2)
    first, second = cells.nth(0), cells.nth(1)
    assert _text_becomes(first, SET) == SET

    _run(page, first)
    _run(page, second)

    out1, out2 = first.locator(".jp-Cell-outputArea"), second.locator(".jp-Cell-outputArea")
    # JupyterLab sends the cell's model id in the execute request's metadata.
    expect(out1).to_contain_text("cellId: cell-set", timeout=30_000)
    expect(out1).to_contain_text(f'hello: {{"extension": "{VERSION}", "ok": true}}', timeout=30_000)
    expect(out1).to_contain_text('set_cell: {"ok": true}')
    assert _text_becomes(first, NEW) == NEW

    expect(out2).to_contain_text("cellId: cell-refuse")
    expect(out2).to_contain_text('set_cell: {"error": "the cell was edited since', timeout=30_000)
    expect(out2).to_contain_text('set_cell: {"error": "no cell with id no-such-cell')
    expect(out2).to_contain_text('launch: {"error": "unknown action \\"launch\\"", "ok": false}')
    assert _text(second) == REFUSE

    # The edit is one step of the editor's undo history.
    first.locator(".cm-content").click()
    page.keyboard.press("Control+z")
    assert _text_becomes(first, SET) == SET

    # After a kernel restart the extension still answers.
    page.get_by_role("menuitem", name="Kernel", exact=True).click()
    page.locator(".lm-Menu [data-command='kernelmenu:restart']").click()
    page.locator(".jp-Dialog .jp-mod-accept").click()
    _run(page, first)
    expect(first.locator(".jp-InputPrompt")).to_have_text("[1]:", timeout=30_000)  # a new kernel ran it
    assert _text_becomes(first, NEW) == NEW
    page.close()


def test_panel_apply_and_undo_change_the_cell(lab, browser):
    """The %%optimize panel's Apply and Undo, through the extension, on the cell that shows the panel."""
    from playwright.sync_api import expect

    page, cells = _open(browser, lab("panel"), 1)
    cell = cells.nth(0)
    _run(page, cell)
    out = cell.locator(".jp-Cell-outputArea")
    expect(out).to_contain_text(f"Kernel Lab extension {VERSION}", timeout=30_000)

    out.get_by_role("button", name="Apply v001 to cell").click()
    expect(out).to_contain_text("v001 is in the cell now", timeout=30_000)
    assert _text_becomes(cell, FAST) == FAST

    out.get_by_role("button", name="Undo").click()
    expect(out).to_contain_text("Undone.", timeout=30_000)
    assert _text_becomes(cell, PANEL) == PANEL

    out.get_by_role("button", name="Apply v001 to cell").click()
    expect(out).to_contain_text("v001 is in the cell now", timeout=30_000)
    cell.locator(".cm-content").click()
    page.keyboard.press("Control+End")
    page.keyboard.type("# mine")  # the user edits the cell: Undo must not take that away
    out.get_by_role("button", name="Undo").click()
    expect(out).to_contain_text("the cell was edited since", timeout=30_000)
    assert _text(cell) == FAST + "# mine"
    page.close()


def test_a_console_on_the_notebooks_kernel_does_not_answer_for_it(lab, browser):
    """A console shares the notebook's kernel; its connection must leave Kernel Lab's comms to the notebook."""
    from playwright.sync_api import TimeoutError as Late
    from playwright.sync_api import expect

    page, cells = _open(browser, lab("panel"), 1)
    cell = cells.nth(0)
    search = page.locator(".lm-CommandPalette-input")
    item = page.locator(".lm-CommandPalette-item[data-command='notebook:create-console']")
    console = page.locator(".jp-ConsolePanel")
    for tries in range(1, 4):  # a busy page can lose a click, a key or what was typed: each try starts afresh
        cell.locator(".jp-InputPrompt").click()  # the keys go to the notebook
        page.keyboard.press("Control+Shift+c")  # the command palette; typing waits for its box to take focus
        try:
            expect(search).to_be_focused(timeout=10_000)
            search.fill("New Console for Notebook", timeout=10_000)  # focused, then hidden: a palette closed again
            # Enter runs the active item: a click can land while the palette redraws its filtered list (the item detached)
            expect(item).to_have_class(re.compile(r"\blm-mod-active\b"), timeout=10_000)
            search.press("Enter")
            expect(console.first).to_be_attached(timeout=30_000)
            break
        except (AssertionError, Late):
            if console.count():  # it came, late
                break
            if tries == 3:
                raise
            page.keyboard.press("Escape")
    expect(console).to_have_count(1, timeout=10_000)
    _run(page, cell)
    out = cell.locator(".jp-Cell-outputArea")
    expect(out).to_contain_text(f"Kernel Lab extension {VERSION}", timeout=30_000)
    out.get_by_role("button", name="Apply v001 to cell").click()
    expect(out).to_contain_text("v001 is in the cell now", timeout=30_000)
    assert _text_becomes(cell, FAST) == FAST
    page.close()


def test_optimize_then_apply_runs_the_new_kernel_next_time(lab, browser):
    """%%optimize run for real (replay mode), a version picked in its panel and applied into the cell; the
    magic line stays as a comment, so running the cell again runs the kernel instead of optimizing it again."""
    from playwright.sync_api import expect

    page, cells = _open(browser, lab("magic"), 2)
    cell, out = cells.nth(1), cells.nth(1).locator(".jp-Cell-outputArea")
    _run(page, cells.nth(0))
    _run(page, cell, timeout=180)
    expect(out).to_contain_text(f"Kernel Lab extension {VERSION}", timeout=180_000)
    out.locator("select").select_option(index=1)
    out.get_by_role("button", name="Apply v001 to cell").click()
    expect(out).to_contain_text("v001 is in the cell now", timeout=30_000)
    (version,) = lab.root.glob("optimized/*/v001/cell.py")
    header = OPTIMIZE.split("\n", 1)[0]
    timed = json.loads((version.parent / "version.json").read_text())["speedup"]  # the CPU interpreter's timing
    note = f"# Kernel Lab applied v001 ({timed:.2f}x on the CPU) below: uncomment the line above to optimize again."
    applied = f"# {header}\n{note}\n{version.read_text()}"
    assert _text_becomes(cell, applied) == applied
    _run(page, cell)  # the cell now runs v001's code: no new optimization, no new session
    expect(cell.locator(".jp-InputPrompt")).to_have_text("[3]:", timeout=30_000)
    expect(out).not_to_contain_text("Kernel Lab optimize")
    assert len(list(lab.root.glob("optimized/*/v000"))) == 1
    page.close()


def _views_fit(page, cells, size: tuple[int, int], shots: Path):
    """Runs the "views" notebook and checks what a person would: every tab of the dashboard and the panel's diff
    fit the width of the notebook, the roofline has its point, the source keeps its indentation, no widget fails
    to display (a screenshot of each
    tab and of the panel goes to ``shots``, to look at when it fails). Returns the panel."""
    from playwright.sync_api import expect

    for i in range(3):
        _run(page, cells.nth(i), timeout=120)
    profile, panel = cells.nth(1).locator(".jp-Cell-outputArea"), cells.nth(2).locator(".jp-Cell-outputArea")
    tabs = profile.locator(".lm-TabBar-tab, .p-TabBar-tab")
    try:
        expect(tabs).to_have_count(5, timeout=120_000)
    except AssertionError:  # what the page showed instead, to look at
        page.screenshot(path=str(shots / f"not_shown_{size[0]}x{size[1]}.png"), full_page=True)
        outputs = [cells.nth(i).locator(".jp-Cell-outputArea").inner_text()[:500] for i in range(3)]
        raise AssertionError(f"the dashboard's five tabs did not show (screenshot in {shots}); outputs: {outputs!r}") from None
    expect(panel).to_contain_text(f"Kernel Lab extension {VERSION}", timeout=60_000)
    page.wait_for_timeout(1000)
    for name in ("Summary", "Roofline", "Metrics", "Source", "Raw rules"):
        tabs.filter(has_text=name).click()
        page.wait_for_timeout(500)
        if name == "Roofline":
            # a marker per kernel on the roofline, or a bar per memory level in the bandwidth view
            expect(profile.locator(".js-plotly-plot .point").first).to_be_visible(timeout=30_000)
        if name == "Source":  # the code keeps its indentation, as the page shows it
            line = profile.locator(".kl-src td.code", has_text="tl.store(").first
            assert line.evaluate("e => [e.textContent, getComputedStyle(e.querySelector('pre')).whiteSpace]") == [
                "    tl.store(out_ptr + i, tl.load(x_ptr + src, mask=mask), mask=mask)",
                "pre",
            ]
        profile.screenshot(path=shots / f"{name}-{size[0]}x{size[1]}.png")
        assert profile.evaluate(OVERFLOW) == [], f"{name} tab at {size}: see {shots}"
    panel.screenshot(path=shots / f"panel-{size[0]}x{size[1]}.png")
    assert panel.evaluate(OVERFLOW) == [], f"panel at {size}: see {shots}"
    assert page.get_by_text("Error displaying widget").count() == 0
    return panel


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_dashboard_and_panel_fit_the_screen(lab, browser, size, tmp_path):
    """The dashboard and the panel in JupyterLab, at laptop size and on a large screen."""
    page, cells = _open(browser, lab("views"), 3, size)
    _views_fit(page, cells, size, tmp_path)
    page.close()


def test_notebook7_shows_the_views_and_applies_into_the_cell(notebook7, browser, tmp_path):
    """Jupyter Notebook 7 (the classic Notebook's successor) at laptop size: the same views fit, the extension
    answers there too, and Apply puts the version into the cell."""
    from playwright.sync_api import expect

    page, cells = _open(browser, notebook7("views"), 3, (1366, 768), app="notebook7")
    panel = _views_fit(page, cells, (1366, 768), tmp_path)
    panel.get_by_role("button", name="Apply v001 to cell").click()
    expect(panel).to_contain_text("v001 is in the cell now", timeout=30_000)
    assert _text_becomes(cells.nth(2), FAST) == FAST
    page.close()
