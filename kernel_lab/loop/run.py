"""The loop, assembled from its steps (:mod:`kernel_lab.loop.steps`). Candidates run only in the judge's processes."""

from __future__ import annotations

from dataclasses import dataclass

from kernel_lab.cells import CellSource
from kernel_lab.loop import steps
from kernel_lab.loop.steps import Events, Parts, State, Stop
from kernel_lab.session import Session
from kernel_lab.settings import Settings


@dataclass(frozen=True)
class OptimizeRun:
    """What a run of the loop leaves: the session (every version with its verdict), why it stopped, notes."""

    session: Session
    stop: Stop
    notes: tuple[str, ...] = ()

    @property
    def stopped(self) -> str:
        """Why it stopped, in words."""
        return self.stop.text()


def optimize(cell: CellSource, settings: Settings, parts: Parts, *, notes: tuple[str, ...] = ()) -> OptimizeRun:
    """Take the cell's kernel to a faster verified version; every version is kept in a session on disk.

    A round is :func:`~steps.begin`, :func:`~steps.diagnose`, :func:`~steps.propose`, :func:`~steps.judge` and
    :func:`~steps.choose`; the first that returns a :class:`Stop` ends the loop, and :func:`~steps.finish` closes it."""
    for note in notes:
        parts.say(steps.Event(note, state="note"))
    session = Session.create(settings.root, cell.name, cell.text)
    state = State(settings, session, session.original)
    stop: Stop | None = None
    for state.round in range(1, settings.rounds + 1):
        stop = steps.begin(state, parts) or steps.diagnose(state, parts)
        if stop is not None:
            break
        proposals = steps.propose(state, parts)
        if isinstance(proposals, Stop):
            stop = proposals
            break
        if (stop := steps.choose(state, steps.judge(state, parts, proposals))) is not None:
            break
    stop = steps.finish(state, parts, stop or Stop("rounds", {"rounds": settings.rounds}))
    return OptimizeRun(session, stop, steps.notes(state, parts, notes))


__all__ = ["Events", "OptimizeRun", "Parts", "optimize"]
