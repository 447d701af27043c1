"""The %%optimize panel: pick a version, see its diff against the original, apply, reject, undo.

Apply puts the chosen version into the optimized cell itself (its ``%%optimize`` line commented out) through
Kernel Lab's JupyterLab extension; where there is none, the status line says so and how to go on.
Every choice is recorded in the session on disk; Undo takes back the last one.
"""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING, Any

import ipywidgets as widgets

from kernel_lab.display.html import STYLE
from kernel_lab.display.versions import DIFF_STYLE, before_after, header, version_view
from kernel_lab.frontend import NO_EXTENSION, request
from kernel_lab.session import speed
from kernel_lab.widgets.guard import guarded

if TYPE_CHECKING:
    from kernel_lab.results.optimize import OptimizeResult
    from kernel_lab.session import Version


def _label(v: Version, rejected: bool = False) -> str:
    said = speed(v, short=True) if v.speedup else "–"
    state = "rejected" if rejected else {None: "original", True: "correct", False: "not usable"}[v.correct]
    return f"{v.label} · {said} · {state} · {v.origin}"


def panel(result: OptimizeResult) -> widgets.VBox:
    """Versions table, a version picker with its diff, and Apply / Reject / Undo."""
    session = result.session
    errors = widgets.Output()
    table = widgets.HTML()

    def options() -> list[tuple[str, int]]:
        return [(_label(v, v.number in session.rejected), v.number) for v in session.versions]

    # a faster version waiting for the user's second look comes first: its warning, diff and Confirm button show
    pick = widgets.Dropdown(options=options(), value=(session.waiting() or result.best).number, description="version")
    apply_button = widgets.Button(
        description="Apply to cell",
        button_style="success",
        icon="check",
        tooltip="Put this version into the cell (the old text stays in the session; Undo restores it)",
    )
    reject_button = widgets.Button(
        description="Reject", button_style="warning", icon="times", tooltip="Never pick this version as the best"
    )
    undo_button = widgets.Button(description="Undo", icon="undo", tooltip="Take back the last apply, reject or confirm")
    confirm_button = widgets.Button(
        description="Confirm",
        button_style="danger",
        icon="exclamation-triangle",
        tooltip="The judge flagged this version (see its warning): allow it anyway, after checking it yourself",
    )
    status = widgets.HTML()
    details = widgets.HTML()

    def say(text: str, ok: bool = True) -> None:
        status.value = f"<span style='color:{'#1a7f37' if ok else '#b42318'}'>{escape(text)}</span>"

    @guarded(errors)
    def refresh(_change: Any = None) -> None:
        if list(pick.options) != options():  # a version was rejected or taken back: say so in the picker
            value = pick.value
            pick.options = options()
            pick.value = value
        chosen = session.versions[pick.value]
        table.value = STYLE + header(result)
        details.value = STYLE + DIFF_STYLE + version_view(result, chosen.number)
        apply_button.description = f"Apply {chosen.label} to cell"
        rejected = chosen.number in session.rejected
        apply_button.disabled = chosen.correct is False or rejected or chosen is result.in_cell() or session.blocked(chosen)
        apply_button.tooltip = (
            f"Blocked by the judge: {chosen.warnings[0]}"
            if session.blocked(chosen)
            else "Put this version into the cell (the old text stays in the session; Undo restores it)"
        )
        reject_button.disabled = chosen is session.original or chosen.number in session.rejected
        confirm_button.disabled = not session.blocked(chosen)
        confirm_button.layout.display = None if session.blocked(chosen) else "none"  # shown only when it means something
        undo_button.disabled = not session.actions()

    def answered(done: str) -> Any:
        @guarded(errors)
        def on_reply(reply: dict[str, Any]) -> None:
            say(done if reply.get("ok") else reply.get("error", "The front end refused."), bool(reply.get("ok")))
            refresh()

        return on_reply

    @guarded(errors)
    def on_apply(_button: widgets.Button) -> None:
        label = session.versions[pick.value].label
        say(f"Asking the front end to put {label} into the cell…")
        result.replace_cell(
            pick.value,
            on_done=answered(
                f"{label} is in the cell now, with its %%optimize line commented out: running the cell runs the new"
                " kernel. Undo puts the previous text back."
            ),
        )

    @guarded(errors)
    def on_reject(_button: widgets.Button) -> None:
        label = session.versions[pick.value].label
        result.reject(pick.value)
        say(f"Rejected {label}; the best is now {result.best.label}.")
        refresh()

    @guarded(errors)
    def on_confirm(_button: widgets.Button) -> None:
        label = session.versions[pick.value].label
        result.confirm(pick.value)
        say(f"You allowed {label} despite the judge's warning; it can be the best and be applied now.")
        refresh()

    @guarded(errors)
    def on_undo(_button: widgets.Button) -> None:
        result.undo(on_done=answered("Undone."))

    @guarded(errors)
    def on_hello(reply: dict[str, Any]) -> None:
        if reply.get("ok"):
            say(f"Apply puts the chosen version into this cell (Kernel Lab extension {reply.get('extension', '')}).")
        else:
            say(NO_EXTENSION, ok=False)

    apply_button.on_click(on_apply)
    reject_button.on_click(on_reject)
    undo_button.on_click(on_undo)
    confirm_button.on_click(on_confirm)
    pick.observe(refresh, names="value")
    refresh()
    say("Checking whether this front end lets Kernel Lab edit cells… (no answer: it cannot; `.apply(N)` inserts version N below)")
    request({"action": "hello"}, on_hello)
    for button in (apply_button, reject_button, confirm_button, undo_button):
        button.layout.width = "auto"  # room for "Apply v012 to cell"
    buttons = widgets.HBox([pick, apply_button, reject_button, confirm_button, undo_button])
    return widgets.VBox([table, buttons, status, details, widgets.HTML(before_after(result)), errors])
