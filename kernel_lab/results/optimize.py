"""The object ``%%optimize`` and ``kernel_lab.optimize`` return: the versions, and the user's apply,
reject and undo on them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kernel_lab.errors import KernelLabError
from kernel_lab.frontend import Cell, Reply, mimebundle, set_cell
from kernel_lab.loop import OptimizeRun, Stop
from kernel_lab.rewrite.budget import Spent
from kernel_lab.session import Session, Version, speed

NO_CELL = (
    "Kernel Lab does not know which notebook cell this result came from (the front end sent no cell id),"
    " so it cannot change that cell: use `.apply(N)` to insert version N below."
)


@dataclass
class OptimizeResult:
    """The session and what to show: versions, the best version's diff, warnings.

    The user's choices (apply, reject, undo) are recorded in the session. The cell is changed only
    through the front end (:mod:`kernel_lab.frontend`), which refuses when the user edited it since.
    """

    session: Session
    stopped: str  # why the loop ended, in words
    notes: tuple[str, ...] = ()  # what the user must know about how it ran (replay, CPU)
    cell: Cell | None = None  # the notebook cell that ran %%optimize, when known
    stop: Stop | None = None  # why the loop ended, typed (its kind: kernel_lab.loop.steps.STOPS)
    spent: Spent | None = None  # what asking a model cost: requests, tokens, money (the LLM agent's runs)

    @classmethod
    def of(cls, run: OptimizeRun, cell: Cell | None = None) -> OptimizeResult:
        """The result of a run of the loop, for the notebook ``cell`` that ran it (when known)."""
        return cls(run.session, run.stopped, run.notes, cell, run.stop, run.spent)

    @property
    def best(self) -> Version:
        return self.session.best()

    def version(self, number: int | None = None) -> Version:
        """Version ``number`` (default: the best)."""
        if number is None:
            return self.best
        self.session.restore(number)  # raises with the valid range
        return self.session.versions[number]

    def apply(self, version: int | None = None) -> str:
        """Put a version (default: the best) into a new cell below; the optimized cell stays as it is.

        Outside IPython, just returns the source. To change the optimized cell itself, use
        :meth:`replace_cell` (the panel's Apply button).
        """
        chosen = self._usable(self.version(version))
        self.session.act("apply", chosen.number, cell="inserted")
        try:
            from IPython import get_ipython
        except ImportError:
            return chosen.source
        shell = get_ipython()
        if shell is not None:
            shell.set_next_input(chosen.source, replace=False)
        return chosen.source

    def reject(self, version: int) -> None:
        """Never pick this version as the best (undo takes it back)."""
        self.session.act("reject", version)

    def confirm(self, version: int) -> None:
        """Allow a version the judge flagged (after you checked it): it may then be the best and be applied."""
        chosen = self.version(version)
        if not chosen.warnings:
            raise KernelLabError(f"{chosen.label} has no warning to confirm.", fix="Only flagged versions need your say-so.")
        self.session.act("confirm", version)

    def _usable(self, chosen: Version) -> Version:
        """``chosen``, unless the judge's warnings block it (then a one-line error says how to allow it)."""
        if chosen.correct is False:
            raise KernelLabError(f"{chosen.label} is not correct: {chosen.reason}", fix="Pick a correct version.")
        if self.session.blocked(chosen):
            raise KernelLabError(
                f"{chosen.label} is blocked by the judge: {chosen.warnings[0]}",
                fix=f"Check it, then `.confirm({chosen.number})` to allow it.",
            )
        return chosen

    def in_cell(self) -> Version:
        """The version the optimized cell holds now."""
        numbers = [a["version"] for a in self.session.actions() if a.get("cell") == "replaced"]
        return self.session.versions[numbers[-1]] if numbers else self.session.original

    def _text(self, version: Version) -> str:
        assert self.cell is not None  # callers checked that the cell is known
        if version is self.session.original:
            return self.cell.text
        return self.cell.applied(version.source, f"{version.label} ({speed(version, short=True)})")

    def replace_cell(self, version: int | None = None, on_done: Reply = lambda reply: None) -> None:
        """Put a version (default: the best) into the optimized cell, its magic line commented out.

        Asks the JupyterLab extension; ``on_done`` gets its answer. The cell is left alone if the
        user edited it since; the text it had is kept (the original is v000, later ones are versions).
        """
        try:
            chosen = self._usable(self.version(version))
        except KernelLabError as err:
            on_done({"ok": False, "error": str(err)})
            return
        if self.cell is None or self.cell.id is None:
            on_done({"ok": False, "error": NO_CELL})
            return

        def done(reply: dict) -> None:
            if reply.get("ok"):
                self.session.act("apply", chosen.number, cell="replaced")
            on_done(reply)

        set_cell(self.cell.id, self._text(chosen), self._text(self.in_cell()), done)

    def undo(self, on_done: Reply = lambda reply: None) -> None:
        """Take back the last apply or reject; an apply that replaced the cell's text puts the old text back."""
        actions = self.session.actions()
        if not actions:
            on_done({"ok": False, "error": "Nothing to undo."})
            return
        last = actions[-1]
        if last.get("cell") == "replaced" and (self.cell is None or self.cell.id is None):
            on_done({"ok": False, "error": NO_CELL})
            return
        if last.get("cell") != "replaced":
            self.session.undo()
            on_done({"ok": True, "undone": last})
            return
        now = self._text(self.in_cell())
        earlier = [a["version"] for a in actions[:-1] if a.get("cell") == "replaced"]
        previous = self._text(self.session.versions[earlier[-1]] if earlier else self.session.original)

        def done(reply: dict) -> None:
            if reply.get("ok"):
                self.session.undo()
            on_done({**reply, "undone": last})

        assert self.cell is not None and self.cell.id is not None  # checked above
        set_cell(self.cell.id, previous, now, done)

    def __str__(self) -> str:
        from kernel_lab.display.versions import text

        return text(self)

    def _repr_html_(self) -> str:
        from kernel_lab.display.versions import html

        return html(self)

    def panel(self):
        """The interactive view (ipywidgets): pick a version, see its diff, apply, reject, undo."""
        from kernel_lab.widgets.versions import panel

        return panel(self)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        """Text, static HTML, and in a Jupyter kernel the interactive panel on top of them."""
        return mimebundle(str(self), self._repr_html_(), self.panel)
