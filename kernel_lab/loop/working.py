"""The judge, the profiler and the screen, lent to a working rewriter (an agent) for one round, bound to the session:
every candidate judged becomes a version as it is judged (its parent: the version the round started from), with the
transcript of the conversation that made it. The workers' threads take turns at them (one lock): a candidate's
times are its own."""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from kernel_lab.analysis.cell import prompt_section, read
from kernel_lab.cells import CellSource
from kernel_lab.errors import KernelLabError
from kernel_lab.loop.roof import NEAR_ROOF, ranked, reached
from kernel_lab.loop.steps import REPORT, Event, Parts, State, Stop, outcome, record, rewrite_context, verified
from kernel_lab.rewrite.base import Attempt, Candidate, Feedback, Measured, Profiled, Timed, Turn, Working
from kernel_lab.rewrite.budget import Budget
from kernel_lab.rewrite.harness import keep_harness
from kernel_lab.session import Version
from kernel_lab.verify import Verdict
from kernel_lab.verify.findings import FAILURES

TRANSCRIPT = "transcript.json"
SHOWN = 3  # bottlenecks of a candidate's profile told to the model


def feedback_of(version: Version, verdict: Verdict) -> Feedback:
    """The judge's verdict on ``version``, typed for a rewriter."""
    t = verdict.timing
    timed = (
        None
        if t is None
        else Timed(t.candidate_ms, t.candidate_spread, t.reference_ms, t.reference_spread, t.speedup, t.significant)
    )
    return Feedback(
        version.label,
        verdict.correct,
        verdict.reason,
        version.source,
        verdict.failure,
        FAILURES.get(verdict.failure or "", ""),
        tuple((f.kind, f.text) for f in verdict.warnings),
        tuple((f.kind, f.text) for f in verdict.notes),
        verdict.checks,
        verdict.max_rel_err,
        timed,
    )


class LoopTools:
    """:class:`~kernel_lab.rewrite.base.Tools` for a round of the loop."""

    def __init__(self, state: State, parts: Parts) -> None:
        self.state, self.parts = state, parts
        self._turns = threading.Lock()  # one at a time at the judge, the profiler and the screen
        self._session = threading.Lock()

    @property
    def screening(self) -> bool:
        return self.parts.screen is not None and self.state.settings.screen > 0

    def best(self) -> tuple[str, float | None]:
        with self._session:
            best = self.state.session.best()
        return best.label, None if best is self.state.session.original else best.speedup

    def judge(self, candidates: Sequence[Candidate], turn: Turn) -> list[Feedback]:
        state, original = self.state, self.state.session.original.source
        with self._session:
            made = [self._version(c, keep_harness(original, c.source).source, turn) for c in candidates]
        for version, candidate in zip(made, candidates):
            self.say(turn, f"{version.label} proposed: {candidate.explanation}", version.label, "proposed")
        assert self.parts.judge is not None
        with self._turns:
            verdicts = self.parts.judge.check_many([v.source for v in made])
        with self._session:
            for version, candidate, verdict in zip(made, candidates, verdicts):
                record(state.session, version, verdict, self.parts.interpreted)
                state.history.append(Attempt(candidate.explanation, outcome(version)))
                judged = verified(state.session, version, state.round)
                self.parts.say(replace(judged, worker=turn.worker, turn=turn.turn))
        return [feedback_of(v, verdict) for v, verdict in zip(made, verdicts)]

    def _version(self, candidate: Candidate, source: str, turn: Turn) -> Version:
        return self.state.session.add(
            source,
            origin=candidate.origin,
            parent=self.state.current.number,
            explanation=candidate.explanation,
            answers=candidate.answers,
            worker=turn.worker,
            turn=turn.turn,
        )

    def profile(self, feedback: Feedback) -> Profiled:
        """A correct candidate's own profile, read for the model (a replayed report says it is not its own)."""
        version = self._named(feedback.version)
        try:
            with self._turns:
                profile = self.parts.profiler.collect(
                    CellSource(version.source), self.state.settings, output=self.state.session.folder(version) / REPORT
                )
        except KernelLabError as err:
            return Profiled(note=f"It could not be profiled: {err}")
        if not profile.replay:
            with self._session:
                self.state.profiled[version.number] = profile  # the next round's diagnosis, if it goes on
        found = ranked(profile)
        where = reached(profile, found[0][0]) if found else None
        reading = read(profile)
        note = (
            f"A REPLAYED recorded report ({profile.origin}), not this version's own profile: no GPU here."
            if profile.replay
            else ""
        )
        return Profiled(
            tuple({**b.to_dict(), "kernel": kernel} for kernel, b in found[:SHOWN]),
            f"{where[0]:.0%} of the {where[1]} roof" if where else "",
            where is not None and where[0] >= NEAR_ROOF and not profile.replay,  # a recorded report is not its own
            prompt_section(reading) if reading is not None else "",
            note,
        )

    def screen(self, variants: list[str]) -> Measured:
        assert self.parts.screen is not None
        with self._turns:
            try:
                return self.parts.screen.measure(variants)
            finally:
                self.parts.screen.rest()  # the judge has the GPU to itself

    def say(self, turn: Turn, message: str, version: str | None = None, state: str = "worker") -> None:
        r = self.state.round
        said = f"round {r}, worker {turn.worker}, turn {turn.turn}: {message}"
        self.parts.say(Event(said, r, version, state, worker=turn.worker, turn=turn.turn))

    def keep(self, version: str, transcript: Mapping[str, Any]) -> None:
        folder = self.state.session.folder(self._named(version))
        (folder / TRANSCRIPT).write_text(json.dumps(transcript, indent=1))

    def _named(self, label: str) -> Version:
        return self.state.session.versions[int(label.removeprefix("v"))]


def work(state: State, parts: Parts, rewriter: Working) -> list[Version] | Stop:
    """A round of a working rewriter: it judges its candidates with the loop's tools as it makes them (each a version
    of the session when judged); the versions it made, or why there are none."""
    top, before = state.bottlenecks[0][1], len(state.session.versions)
    message = f"round {state.round}: top bottleneck {top.kind} ({top.score:.2f}); working with {parts.rewriter.name}"
    parts.say(Event(message, state.round, state.current.label, "rewriting"))
    state.budget = state.budget or Budget.of(state.settings)
    try:
        found = rewriter.work(rewrite_context(state, parts), LoopTools(state, parts), state.budget)
    except KernelLabError as err:
        return Stop("rewriter_failed", {"round": state.round, "rewriter": parts.rewriter.name, "error": err})
    for note in found.notes:
        parts.say(Event(f"round {state.round}: {note}", state.round, state="note"))
    parts.say(Event(f"round {state.round}: asking the model so far: {state.budget.spent().text()}", state.round, state="note"))
    made = state.session.versions[before:]
    if made:
        return made
    if state.budget.spent().stopped:
        return Stop("budget", {"why": state.budget.spent().stopped})
    return Stop("nothing_to_propose", {"rewriter": parts.rewriter.name, "kind": top.kind, "why": ""})
