"""The notebook front end, seen from the kernel: which cell is running, and editing a cell.

A kernel cannot edit notebook cells; Kernel Lab's JupyterLab extension (``extension/``) can. They
talk over a Jupyter comm to the target ``kernel_lab``: each request opens a comm whose data is the
request, and the extension answers once on it:

- ``{"action": "hello"}`` → ``{"ok": true, "extension": "<version>"}``
- ``{"action": "set_cell", "cell_id": ..., "source": ..., "expect": ...}`` → ``{"ok": true}``, or
  ``{"ok": false, "error": ...}`` when the cell is gone or its text is no longer ``expect`` (the
  user edited it since: their edit wins).

A front end without the extension closes the comm unanswered; the caller hears :data:`NO_EXTENSION`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

TARGET = "kernel_lab"
NO_EXTENSION = (
    "This front end cannot let Kernel Lab edit cells (its JupyterLab extension is not installed or not"
    " enabled): `pip install kernel-lab` in the JupyterLab environment and reload the page, or use"
    " `.apply(N)` in a new cell to insert version N below."
)
Reply = Callable[[dict[str, Any]], None]


@dataclass(frozen=True)
class Cell:
    """The notebook cell being run: its front-end id (JupyterLab sends one) and its full text."""

    id: str | None
    text: str

    @property
    def header(self) -> str:
        """The cell magic line (``%%optimize ...``), or '' when the cell has none."""
        first = self.text.split("\n", 1)[0]
        return first if first.startswith("%%") else ""

    def applied(self, body: str, label: str) -> str:
        """The cell's text with version ``label`` (``body``) applied: the magic line stays, commented out, so
        that running the cell runs the new kernel instead of optimizing again."""
        if not self.header:
            return body
        return f"# {self.header}\n# Kernel Lab applied {label} below: uncomment the line above to optimize again.\n{body}"


def _kernel() -> Any | None:
    """The Jupyter kernel running this code, or None (plain Python, terminal IPython)."""
    import sys

    if "IPython" not in sys.modules:  # no IPython imported: certainly no kernel
        return None
    from IPython import get_ipython

    return getattr(get_ipython(), "kernel", None)


def mimebundle(text: str, html: str, widget: Callable[[], Any]) -> dict[str, Any]:
    """Text and static HTML, and in a Jupyter kernel (where widgets work) the interactive ``widget()`` on top."""
    bundle: dict[str, Any] = {"text/plain": text, "text/html": html}
    if _kernel() is not None:
        bundle.update({k: v for k, v in widget()._repr_mimebundle_().items() if k != "text/plain"})
    return bundle


def running_cell() -> Cell | None:
    """The cell whose execution is running now, when in a Jupyter kernel."""
    kernel = _kernel()
    if kernel is None:
        return None
    parent = kernel.get_parent() or {}
    code = parent.get("content", {}).get("code")
    return None if code is None else Cell(parent.get("metadata", {}).get("cellId"), code)


def request(data: dict[str, Any], on_reply: Reply) -> None:
    """Send one request to the extension; ``on_reply`` gets its answer, or the no-extension error.

    Asynchronous: answers arrive after the running cell finishes (the kernel handles one message
    at a time). A front end that neither answers nor closes the comm (a headless client) never calls
    back.
    """
    from comm import create_comm

    answered = False

    def reply(msg: dict[str, Any]) -> None:
        nonlocal answered
        answered = True
        comm.close()
        on_reply(msg["content"]["data"])

    def closed(_msg: dict[str, Any]) -> None:
        if not answered:
            on_reply({"ok": False, "error": NO_EXTENSION})

    comm = create_comm(target_name=TARGET, data=data)
    comm.on_msg(reply)
    comm.on_close(closed)


def set_cell(cell_id: str, source: str, expect: str | None, on_reply: Reply) -> None:
    """Ask the extension to replace a cell's text, unless it is no longer ``expect``."""
    request({"action": "set_cell", "cell_id": cell_id, "source": source, "expect": expect}, on_reply)
