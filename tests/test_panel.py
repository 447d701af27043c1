"""The %%optimize panel's Apply / Reject / Undo in a real Jupyter kernel.

The test plays the front end over the real kernel protocol (execute requests carrying JupyterLab's
``cellId``, comm messages on the shell channel), answering the panel's requests the way the
JupyterLab extension does; tests/test_extension.py drives the real extension in a browser.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from jupyter_client.manager import start_new_kernel

from kernel_lab.frontend import NO_EXTENSION, TARGET

pytestmark = pytest.mark.slow  # a notebook kernel or the judge's sandboxes

BODY = "def run(x):\n    return x + 1\n"
FAST = "def run(x):\n    return x + 1  # faster\n"
HEADER = "%%optimize --rounds 1"
# v001 applied: the magic line commented out, so running the cell runs the new kernel
APPLIED = f"# {HEADER}\n# Kernel Lab applied v001 (2.00x) below: uncomment the line above to optimize again.\n{FAST}"


class FrontEnd:
    """A minimal notebook front end: runs cells with ids, sees and answers Kernel Lab's comms."""

    def __init__(self) -> None:
        self.km, self.kc = start_new_kernel(kernel_name="python3")
        self.requests: list[dict] = []  # comm_open messages to Kernel Lab's target, in order

    def close(self) -> None:
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=True)

    def _until_idle(self, msg_id: str) -> str:
        text = []
        while True:
            msg = self.kc.get_iopub_msg(timeout=60)
            kind, content = msg["msg_type"], msg["content"]
            if kind == "comm_open" and content.get("target_name") == TARGET:
                self.requests.append(content)
            elif kind == "stream":
                text.append(content["text"])
            elif kind == "error":
                text.append("\n".join(content["traceback"]))
            if kind == "status" and content["execution_state"] == "idle" and msg["parent_header"].get("msg_id") == msg_id:
                return "".join(text)

    def run(self, code: str, cell_id: str = "scratch") -> str:
        msg = self.kc.session.msg(
            "execute_request",
            {
                "code": code,
                "silent": False,
                "store_history": True,
                "user_expressions": {},
                "allow_stdin": False,
                "stop_on_error": True,
            },
            metadata={"cellId": cell_id},
        )
        self.kc.shell_channel.send(msg)
        return self._until_idle(msg["header"]["msg_id"])

    def answer(self, request: dict, reply: dict | None) -> None:
        """Answer a request as the extension would, or (reply None) close it unanswered."""
        kind, content = (
            ("comm_close", {"comm_id": request["comm_id"]})
            if reply is None
            else ("comm_msg", {"comm_id": request["comm_id"], "data": reply})
        )
        msg = self.kc.session.msg(kind, content)
        self.kc.shell_channel.send(msg)
        self._until_idle(msg["header"]["msg_id"])


@pytest.fixture
def front():
    f = FrontEnd()
    yield f
    f.close()


def test_the_kernel_knows_which_cell_runs(front):
    shown = front.run("from kernel_lab.frontend import running_cell\nprint(repr(running_cell()))", cell_id="cell-42")
    assert "Cell(id='cell-42', text='from kernel_lab.frontend import running_cell" in shown


def test_apply_reject_undo_through_the_front_end(front, tmp_path):
    setup = f"""
    from kernel_lab.frontend import Cell
    from kernel_lab.results.optimize import OptimizeResult
    from kernel_lab.session import Session
    s = Session.create({str(tmp_path)!r}, "add", {BODY!r})
    s.add({FAST!r}, origin="search", parent=0, correct=True, speedup=2.0, significant=True)
    s.add("wrong", origin="search", parent=0, correct=False, reason="wrong: max error 3")
    s.add("flagged", origin="llm:m", parent=0, correct=True, speedup=30.0, significant=True, warnings=["a fall-back to PyTorch"])
    r = OptimizeResult(s, "ran 1 round(s)", cell=Cell("opt-cell", {HEADER + chr(10) + BODY!r}))
    p = r.panel()
    pick, apply, reject, confirm, undo = p.children[1].children
    status = p.children[2]
    def show():
        print("STATUS", status.value)
        print("ACTIONS", [(a["action"], a["version"], a.get("cell")) for a in s.actions()])
    """
    front.run(textwrap.dedent(setup))
    hello = front.requests.pop(0)
    assert hello["data"] == {"action": "hello"}
    front.answer(hello, {"ok": True, "extension": "0.test"})
    assert "Kernel Lab extension 0.test" in front.run("show()")
    assert front.run("print(pick.value, confirm.layout.display)") == "3 None\n"  # it opens on the one waiting for you
    assert front.run("pick.value = 2; print(apply.disabled)") == "True\n"  # a wrong version cannot be applied
    assert front.run("print(confirm.layout.display)") == "none\n"  # nothing to confirm: no Confirm button
    shown = front.run(
        "pick.value = 3; print(apply.disabled, confirm.disabled, confirm.layout.display, apply.tooltip, r.best.label)"
    )
    assert shown == "True False None Blocked by the judge: a fall-back to PyTorch v001\n"  # flagged: blocked until confirmed
    shown = front.run("confirm.click(); show(); print(apply.disabled, confirm.disabled, confirm.layout.display, r.best.label)")
    assert "You allowed v003" in shown and "ACTIONS [('confirm', 3, None)]" in shown and shown.endswith("False True none v003\n")
    assert "ACTIONS []" in front.run("undo.click(); show()") and not front.requests

    front.run("pick.value = 1; apply.click()")
    put = front.requests.pop(0)
    assert put["data"] == {
        "action": "set_cell",
        "cell_id": "opt-cell",
        "source": APPLIED,
        "expect": f"{HEADER}\n{BODY}",
    }
    front.answer(put, {"ok": True})
    shown = front.run("show()")
    assert "v001 is in the cell now" in shown and "ACTIONS [('apply', 1, 'replaced')]" in shown

    front.run("undo.click()")
    back = front.requests.pop(0)
    assert back["data"]["source"] == f"{HEADER}\n{BODY}" and back["data"]["expect"] == APPLIED
    front.answer(back, {"ok": True})
    assert "ACTIONS []" in front.run("show()")

    front.run("apply.click()")  # the user edited the cell meanwhile: the extension refuses
    front.answer(front.requests.pop(0), {"ok": False, "error": "the cell was edited since Kernel Lab read it"})
    shown = front.run("show()")
    assert "the cell was edited since" in shown and "ACTIONS []" in shown

    shown = front.run("pick.value = 1; reject.click(); show(); print('BEST', r.best.label)")
    assert "Rejected v001; the best is now v000" in shown and "ACTIONS [('reject', 1, None)]" in shown and "BEST v000" in shown
    shown = front.run("undo.click(); show(); print('BEST', r.best.label)")
    assert "ACTIONS []" in shown and "BEST v001" in shown and not front.requests  # no cell edit to take back
    log = [json.loads(line)["action"] for line in next(Path(tmp_path).glob("*/actions.jsonl")).read_text().splitlines()]
    assert log == ["confirm", "undo", "apply", "undo", "reject", "undo"]  # every choice is kept on disk


def test_a_front_end_without_the_extension_is_named(front, tmp_path):
    front.run(
        f"from kernel_lab.results.optimize import OptimizeResult\nfrom kernel_lab.session import Session\n"
        f"p = OptimizeResult(Session.create({str(tmp_path)!r}, 'x', 'pass'), 'ran 1 round(s)').panel()"
    )
    front.answer(front.requests.pop(0), None)  # JupyterLab closes comms to targets it does not know
    assert NO_EXTENSION[:60] in front.run("print(p.children[2].value)")


def test_a_rejected_version_says_so_in_the_picker_and_cannot_be_applied(tmp_path):
    import ipywidgets as W

    import kernel_lab
    from kernel_lab import samples
    from kernel_lab.widgets.versions import panel

    cell = Path(__file__).resolve().parent / "cells" / "add_ref.py"
    result = kernel_lab.optimize(cell, rounds=1, candidates=1, screen=0, root=tmp_path, replay=samples.report("memory_bound"))

    def find(w, kind):
        return ([w] if isinstance(w, kind) else []) + [x for c in getattr(w, "children", ()) for x in find(c, kind)]

    view = panel(result)
    pick = find(view, W.Dropdown)[0]
    buttons = {b.description.split()[0]: b for b in find(view, W.Button)}
    pick.value = 1
    assert not buttons["Apply"].disabled and "correct" in pick.options[1][0]
    buttons["Reject"].click()
    assert pick.value == 1 and "rejected" in pick.options[1][0] and buttons["Apply"].disabled
