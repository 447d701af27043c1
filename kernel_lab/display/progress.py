"""The progress of ``%%optimize`` as a person reads it: each round's versions and their state, the best so far.

Fed the loop's events (:class:`kernel_lab.loop.Event`); drawn as an HTML table that a notebook updates in
place, or as one line a terminal rewrites.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from html import escape

from kernel_lab.loop import Event

MARKS = {"proposed": "waiting", "checking": "checking…", "timing": "timing…", "done": "judged"}


@dataclass
class Progress:
    """What has happened so far, folded from the events."""

    lines: list[str] = field(default_factory=list)  # notes and the round's steps, in order
    rows: dict[str, list[str]] = field(default_factory=dict)  # version -> [round, what it tries, state]
    best: str = "the original"
    step: str = ""

    def add(self, event: Event) -> None:
        if event.state == "note":
            self.lines.append(event.message)
        elif event.state in ("profiling", "rewriting", "screening"):
            self.step = event.message
        elif event.version is not None and event.state == "proposed":
            what = event.message.split(": ", 2)[-1]
            who = f"worker {event.worker}, turn {event.turn}: " if event.worker is not None else ""
            self.rows[event.version] = [str(event.round), who + what, MARKS["proposed"]]
        elif event.version in self.rows and event.state in MARKS:
            self.rows[event.version][2] = MARKS[event.state]
        elif event.version in self.rows and event.state == "verified":
            self.rows[event.version][2] = event.outcome or "judged"
            self.best = event.best or self.best
        else:
            self.step = event.message

    def html(self) -> str:
        rows = "".join(
            f"<tr><td>{escape(v)}</td><td>{escape(r)}</td><td style='text-align:left'>{escape(what[:90])}</td>"
            f"<td style='text-align:left'>{escape(state)}</td></tr>"
            for v, (r, what, state) in self.rows.items()
        )
        notes = "".join(f"<div class='note'>{escape(n)}</div>" for n in self.lines)
        table = (
            f"<table><tr><th>version</th><th>round</th><th>what it tries</th><th>state</th></tr>{rows}</table>" if rows else ""
        )
        return (
            f"<div class='kl'>{notes}<div><b>Kernel Lab optimize</b>: {escape(self.step)}</div>{table}"
            f"<div>Best so far: <b>{escape(self.best)}</b></div></div>"
        )

    def finished(self) -> str:
        """What stays above the result once the loop is over: one line (the result says the rest)."""
        judged = sum(state not in MARKS.values() for _, _, state in self.rows.values())
        return f"<div class='kl'><b>Kernel Lab optimize</b>: done, {judged} candidate(s) judged; best: {escape(self.best)}.</div>"

    def line(self) -> str:
        """One terminal line: the step, each version's state, the best so far."""
        states = " | ".join(f"{v} {state.split(':')[0]}" for v, (_, _, state) in list(self.rows.items())[-6:])
        return f"{self.step[:60]} [{states}] best: {self.best}"
