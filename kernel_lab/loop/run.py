"""The loop, assembled from its steps (:mod:`kernel_lab.loop.steps`). Candidates run only in the judge's processes."""

from __future__ import annotations

from dataclasses import dataclass

from kernel_lab.cells import CellSource
from kernel_lab.loop import steps
from kernel_lab.loop.steps import Events, Parts, State, Stop
from kernel_lab.loop.working import work
from kernel_lab.rewrite.base import Working
from kernel_lab.rewrite.budget import Spent
from kernel_lab.session import Session, Version
from kernel_lab.settings import Settings


@dataclass(frozen=True)
class OptimizeRun:
    """What a run of the loop leaves: the session (every version with its verdict), why it stopped, notes."""

    session: Session
    stop: Stop
    notes: tuple[str, ...] = ()
    spent: Spent | None = None  # what asking a model cost (an agent's run)

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
        made = _round(state, parts)
        if isinstance(made, Stop):
            stop = made
            break
        if (stop := steps.choose(state, made)) is not None:
            break
    stop = steps.finish(state, parts, stop or Stop("rounds", {"rounds": settings.rounds}))
    spent = state.budget.spent() if state.budget is not None else None
    return OptimizeRun(session, stop, steps.notes(state, parts, notes), spent)


def _round(state: State, parts: Parts) -> list[Version] | Stop:
    """The round's versions: a working rewriter's (it judges its own, turn by turn), else the proposals judged."""
    if isinstance(parts.rewriter, Working):
        return work(state, parts, parts.rewriter)
    proposals = steps.propose(state, parts)
    return proposals if isinstance(proposals, Stop) else steps.judge(state, parts, proposals)


__all__ = ["Events", "OptimizeRun", "Parts", "optimize"]
