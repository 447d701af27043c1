"""What the model was told and what it said, for a version an LLM worker made: its conversation up to that version's
verdict (``vNNN/transcript.json``), folded away under one line."""

from __future__ import annotations

import json
from html import escape
from pathlib import Path

from kernel_lab.loop.working import TRANSCRIPT

STYLE = "max-height:24em;overflow:auto;white-space:pre-wrap;margin:0.2em 0 0.6em 0"
ROLES = {"system": "the rules (system)", "user": "told", "assistant": "the model"}


def transcript_html(folder: Path) -> str:
    """The conversation that made the version kept in ``folder``, or "" when none was kept (or it is unreadable)."""
    path = folder / TRANSCRIPT
    try:
        kept = json.loads(path.read_text())
        messages = list(kept["messages"])
    except (OSError, ValueError, KeyError, TypeError):
        return ""
    turns = len(kept.get("turns", ()))
    title = (
        f"What the model was told, what it said: worker {kept.get('worker', '?')} ({escape(str(kept.get('direction', '')))}),"
        f" {turns} turn{'s' * (turns != 1)}"
    )
    shown = "".join(
        f"<div><b>{escape(ROLES.get(str(m.get('role')), str(m.get('role'))))}</b>"
        f"<pre style='{STYLE}'>{escape(str(m.get('content', '')))}</pre></div>"
        for m in messages
    )
    return f"<details class='transcript'><summary>{title}</summary>{shown}</details>"
