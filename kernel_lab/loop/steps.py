"""The loop's steps, one function each over a :class:`State`; a step that ends the loop returns a typed :class:`Stop`.

A round: :func:`begin` (budgets) → :func:`diagnose` (profile the current version, or carry the last profile when only
launch parameters changed) → :func:`propose` (the rewriter, exploring with the screen when it can) → :func:`judge`
(every candidate a version, each verdict recorded) → :func:`choose` (the best version goes on, or the loop stops).
:func:`finish` names what the user must know and profiles the best version for the before/after view.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from kernel_lab.analysis import cell
from kernel_lab.cells import CellSource, language
from kernel_lab.errors import KernelLabError
from kernel_lab.loop.roof import carried, near_roof, ranked, reached, roof_note
from kernel_lab.models import Bottleneck, Profile
from kernel_lab.profiling import Profiler, start_ahead
from kernel_lab.rewrite import cannot_fix, why_nothing
from kernel_lab.rewrite.base import Attempt, Candidate, Explored, Exploring, RewriteContext, Rewriter
from kernel_lab.rewrite.budget import Budget
from kernel_lab.rewrite.harness import keep_harness
from kernel_lab.session import Session, Version, speed
from kernel_lab.settings import Settings
from kernel_lab.verify import Judging, Verdict
from kernel_lab.verify.findings import kinds, texts

MIN_GAIN = 0.05  # stop when no bottleneck is estimated to hold more than this share of the time
REPORT = "profile.ncu-rep"

#: why the loop stopped, by kind: the one place its sentence is written
STOPS = {
    "rounds": "ran {rounds} round(s)",
    "time_budget": "time budget of {seconds:.0f} s spent",
    "refused": "nothing can be judged: {why}",
    "replay": "{profiler} mode: one round only (the recorded report cannot show a new version)",
    "no_bottleneck": "no bottleneck holds more than {share:.0%} of the time in {version}",
    "near_roof": "{version} reaches {roof}: little is left to gain",
    "rewriter_failed": "round {round}: the {rewriter} rewriter failed: {error}",
    "settled": "{rewriter}: {version} {why}",
    "screened": "{rewriter} screened {count} around {version} (in this round or earlier ones): none untried was faster{unrun}",
    "nothing_to_propose": "{rewriter} had nothing more to propose for {kind}{why}",
    "nothing_faster": "round {round} found nothing faster than {version}{waiting}",
    "budget": "the LLM budget is spent: {why}",
}


@dataclass(frozen=True)
class Stop:
    """Why the loop stopped: a kind of :data:`STOPS`, what its sentence names, and what the end added (the best
    version's place on its roof)."""

    kind: str
    data: dict[str, Any] = field(default_factory=dict)
    after: str = ""

    def text(self) -> str:
        return STOPS[self.kind].format(**self.data) + self.after


@dataclass(frozen=True)
class Event:
    """What the loop is doing, for a progress display: one line, and where in the loop it is."""

    message: str
    round: int | None = None
    version: str | None = None  # "v003"
    state: str | None = None  # "note", "profiling", "rewriting", "proposed", "checking", "timing", "done", "verified", "worker"
    outcome: str | None = None  # for "verified": how the version did, in words
    best: str | None = None  # for "verified": the best version so far, e.g. "v002, 1.84x"
    worker: int | None = None  # for "worker": the LLM agent's worker (1-based) ...
    turn: int | None = None  # ... and its turn


Events = Callable[[Event], None]


@dataclass
class Parts:
    """What the loop runs with: who profiles, who rewrites, who judges, who screens (optional), who listens."""

    profiler: Profiler
    rewriter: Rewriter
    judge: Judging | None  # None until the caller sets one up (kernel_lab.api.optimize does, with the screen)
    screen: Any = None  # a Screening, for a rewriter that explores
    say: Events = lambda event: None
    first: Profile | None = None  # a profile of the cell itself (what %%profile just gave): round 1 starts from it
    interpreted: bool = False  # the judge runs Triton's CPU interpreter (no GPU): its times are qualified so

    @property
    def searching(self) -> bool:
        """A rewriter that measures its own steps with the screen: a version that changes only launch parameters
        of the last one profiled is not profiled again."""
        return self.screen is not None and isinstance(self.rewriter, Exploring)


@dataclass
class State:
    """Where the loop is: the session, the current version, the last profile and what it ranked, the round."""

    settings: Settings
    session: Session
    current: Version
    started: float = field(default_factory=time.monotonic)
    round: int = 0
    history: list[Attempt] = field(default_factory=list)
    diagnosed: Version | None = None  # the last version profiled
    profile: Profile | None = None  # its profile
    bottlenecks: list[tuple[str, Bottleneck]] = field(default_factory=list)  # its bottlenecks, the costliest first
    reused: str = ""  # what was said when round 1 started from a given profile
    budget: Budget | None = None  # what asking a model may cost and has cost (a working rewriter's), for the whole run
    profiled: dict[int, Profile] = field(default_factory=dict)  # versions profiled when judged (by a working rewriter)


def outcome(v: Version) -> str:
    """How a verified version did, in words."""
    if v.correct is False:
        return f"wrong or failed: {v.reason}"
    if v.speedup is None:
        return "correct, not timed"
    noise = "" if v.significant else " (within noise)"
    return f"correct, {speed(v)} vs the original{noise}"


def record(session: Session, version: Version, verdict: Verdict, interpreted: bool = False) -> None:
    """Store a verdict in the version (and the reference's time in the original, once); ``interpreted``: timed by
    Triton's CPU interpreter."""
    version.correct, version.reason, version.failure = verdict.correct, verdict.reason, verdict.failure
    version.interpreted = interpreted
    version.warnings, version.warning_kinds = texts(verdict.warnings), kinds(verdict.warnings)
    version.notes = texts(verdict.notes)
    if verdict.timing is not None:
        t = verdict.timing
        version.time_ms, version.spread_ms, version.reference_ms = t.candidate_ms, t.candidate_spread, t.reference_ms
        version.speedup, version.significant = t.speedup, t.significant
        if session.original.time_ms is None:
            session.original.time_ms, session.original.spread_ms = t.reference_ms, t.reference_spread
            session.save(session.original)
    session.save(version)


# --- the steps --------------------------------------------------------------------------------------------------------


def begin(state: State, parts: Parts) -> Stop | None:
    """A round may start: the time budget is not spent, the profiler can show a new version (a replayed report
    cannot), and on the CPU interpreter the reference is not too slow to judge candidates (known before any is made)."""
    budget = state.settings.time_budget
    if budget is not None and time.monotonic() - state.started > budget:
        return Stop("time_budget", {"seconds": budget})
    if not parts.profiler.profiles_cells and state.round > 1:
        return Stop("replay", {"profiler": parts.profiler.name})
    if state.budget is not None and state.budget.spent().stopped:
        return Stop("budget", {"why": state.budget.spent().stopped})
    if parts.interpreted and state.round == 1 and parts.judge is not None and (refused := parts.judge.refused()):
        return Stop("refused", {"why": refused.reason})  # at once, rather than each candidate timed out
    return None


def diagnose(state: State, parts: Parts) -> Stop | None:
    """The current version's bottlenecks: carried from the last profile when the search measures its own steps
    (:func:`kernel_lab.loop.roof.carried`), else from its own profile; a stop when nothing is left to gain."""
    say, current = parts.say, state.current
    why_not = None
    if parts.searching and state.diagnosed and state.profile:
        why_not = carried(state.profile, state.bottlenecks[0][0], state.diagnosed, current)
    if why_not is not None:
        say(Event(f"round {state.round}: {why_not}", state.round, current.label, "note"))
        return None
    state.profile = _profile(state, parts)
    if state.profile.replay:
        said = f"round {state.round}: REPLAYING the recorded report {state.profile.origin} instead of profiling {current.label}"
        said += f", and {state.profile.mismatch}" if state.profile.mismatch else ""
        say(Event(f"{said} (no GPU used)", state.round, current.label, "profiling"))
    if (reading := cell.read(state.profile)) is not None:
        say(Event(f"round {state.round}: {cell.summary_line(reading)}", state.round, current.label, "note"))
    state.bottlenecks = ranked(state.profile)
    current.top_bottleneck = state.bottlenecks[0][1].kind if state.bottlenecks else None
    state.session.save(current)
    state.diagnosed = current
    if not state.bottlenecks or state.bottlenecks[0][1].score < MIN_GAIN:
        return Stop("no_bottleneck", {"share": MIN_GAIN, "version": current.label})
    if (near := near_roof(state.profile, *_top(state))) is not None:
        return Stop("near_roof", {"version": current.label, "roof": near})
    return None


def _top(state: State) -> tuple[str, str]:
    """The kernel of the top bottleneck and its kind."""
    kernel, top = state.bottlenecks[0]
    return kernel, top.kind


def _profile(state: State, parts: Parts) -> Profile:
    """The current version's profile: the one given for the original (round 1), the one taken when it was judged,
    else a new one."""
    current, first = state.current, parts.first
    report = state.session.folder(current) / REPORT
    if first is not None and current is state.session.original:
        if Path(first.origin).suffix == ".ncu-rep" and Path(first.origin).is_file():
            shutil.copyfile(first.origin, report)
        state.reused = f"v000 was not profiled again: round 1 started from the profile this cell already had ({first.collector})."
        parts.say(Event(state.reused, state.round, state="note"))
        return first
    if (known := state.profiled.get(current.number)) is not None:  # profiled when a working rewriter judged it
        parts.say(Event(f"round {state.round}: {current.label} was profiled when it was judged", state.round, state="note"))
        return known
    if parts.profiler.profiles_cells:
        parts.say(Event(f"round {state.round}: profiling {current.label}", state.round, current.label, "profiling"))
    return parts.profiler.collect(CellSource(current.source), state.settings, output=report)


def propose(state: State, parts: Parts) -> list[Candidate] | Stop:
    """The rewriter's candidates for the top bottleneck, or why there are none."""
    assert state.profile is not None and state.diagnosed is not None  # profiled, or carried from the last profile
    top, name, current = state.bottlenecks[0][1], parts.rewriter.name, state.current
    of = "" if state.diagnosed is current else f" in {state.diagnosed.label}"
    message = f"round {state.round}: top bottleneck{of} {top.kind} ({top.score:.2f}); rewriting with {name}"
    parts.say(Event(message, state.round, current.label, "rewriting"))
    context = rewrite_context(state, parts)
    try:
        explored = _explored(context, state, parts)
    except KernelLabError as err:
        return Stop("rewriter_failed", {"round": state.round, "rewriter": name, "error": err})
    if explored.candidates:
        return list(explored.candidates)
    if explored.settled:
        return Stop("settled", {"rewriter": name, "version": current.label, "why": explored.settled})
    if explored.screened or explored.recalled:
        count = _configurations(explored.screened + explored.recalled)
        return Stop("screened", {"rewriter": name, "count": count, "version": current.label, "unrun": _unrun(explored)})
    why = why_nothing(parts.rewriter, current.source)
    return Stop("nothing_to_propose", {"rewriter": name, "kind": top.kind, "why": f" ({why})" if why else ""})


def rewrite_context(state: State, parts: Parts) -> RewriteContext:
    """What the rewriter is told of the current version: its source, its profile's bottlenecks (the costliest five),
    the whole cell's reading and its place on its roof when the profile has them, the round's history."""
    assert state.profile is not None
    profile, current = state.profile, state.current
    reading = cell.read(profile)
    where = reached(profile, state.bottlenecks[0][0]) if state.bottlenecks else None
    return RewriteContext(
        source=current.source,
        bottlenecks=[{**b.to_dict(), "kernel": kernel} for kernel, b in state.bottlenecks[:5]],
        device=profile.kernels[0].device if profile.kernels else "unknown GPU",
        history=tuple(state.history),
        language=language(current.source),
        interpreted=parts.interpreted,
        original=state.session.original.source,
        cell=cell.prompt_section(reading) if reading is not None else "",
        roof=f"{where[0]:.0%} of the {where[1]} roof" if where else "",
    )


def _unrun(explored: Explored) -> str:
    """How many of the variants screened had no time, and the first one's reason ("" when all ran)."""
    if not explored.unrun:
        return ""
    n = len(explored.unrun)
    return f"; {n} of the {explored.screened} measured did not run or were wrong there (the first: {explored.unrun[0]})"


def _configurations(n: int) -> str:
    return f"{n} launch configuration{'s' * (n != 1)}"


def _explored(context: RewriteContext, state: State, parts: Parts) -> Explored:
    """Explored with the screen's quick measurements when both can, else proposed."""
    settings, say, round_, rewriter = state.settings, parts.say, state.round, parts.rewriter
    if parts.screen is None or settings.screen <= 0 or not isinstance(rewriter, Exploring):
        return Explored(tuple(rewriter.propose(context, n=settings.candidates)))
    started = time.monotonic()
    say(Event(f"round {round_}: screening launch configurations", round_, state="screening"))
    try:
        found = rewriter.explore(
            context, parts.screen.measure, n=settings.candidates, budget_s=settings.screen_budget, most=settings.screen
        )
    finally:
        parts.screen.rest()  # the judge has the GPU to itself
    for note in found.notes if round_ == 1 else ():
        say(Event(f"round {round_}: {note}", round_, state="note"))
    if found.settled:
        say(Event(f"round {round_}: nothing to screen: the version {found.settled}", round_, state="screening"))
        return found
    n = len(found.candidates)
    went = f"; the {n} fastest go to the judge" if n > 1 else "; the fastest goes to the judge" if n else ""
    went = went or "; none is faster than the version they vary"
    known = f" ({found.recalled} more known from earlier rounds)" if found.recalled else ""
    message = f"round {round_}: screened {_configurations(found.screened)} in {time.monotonic() - started:.0f} s{known}{went}"
    say(Event(message, round_, state="screening"))
    return found


def judge(state: State, parts: Parts, proposals: list[Candidate]) -> list[Version]:
    """Every candidate a version, with the user's harness (:mod:`kernel_lab.rewrite.harness`); the judge's verdicts
    recorded in them, each said as it comes."""
    session, round_, say = state.session, state.round, parts.say
    kept = [keep_harness(session.original.source, c.source) for c in proposals]
    proposals = [replace(c, source=k.source) for c, k in zip(proposals, kept)]
    made = [
        session.add(
            c.source,
            origin=c.origin,
            parent=state.current.number,
            explanation=c.explanation,
            answers=c.answers,
            screen_ms=c.meta.get("screen_ms"),
        )
        for c in proposals
    ]
    for version, candidate, k in zip(made, proposals, kept):
        say(Event(f"round {round_}: {version.label} proposed: {candidate.explanation}", round_, version.label, "proposed"))
        if k.changed or k.dropped:
            names = ", ".join((*k.changed, *k.dropped))
            say(
                Event(
                    f"round {round_}: {version.label} keeps your {names} (the candidate had changed them)",
                    round_,
                    version.label,
                    "note",
                )
            )

    def judging(index: int, step: str) -> None:
        say(Event(f"round {round_}: {made[index].label} {step}", round_, made[index].label, step))

    # the next profile's process (where the profiler starts one ahead) loads while the judge works
    start_ahead(parts.profiler, CellSource(state.current.source), state.settings)
    assert parts.judge is not None
    for version, candidate, verdict in zip(made, proposals, parts.judge.check_many([c.source for c in proposals], judging)):
        record(session, version, verdict, parts.interpreted)
        say(verified(session, version, round_))
        state.history.append(Attempt(candidate.explanation, outcome(version)))
    return made


def verified(session: Session, version: Version, round_: int) -> Event:
    """The event of a judged version: how it did, and the best version so far."""
    leader = session.best()
    so_far = (
        f"{leader.label}, {speed(leader, short=True)}" if leader is not session.original and leader.speedup else "the original"
    )
    said = outcome(version)
    return Event(f"round {round_}: {version.label} {said}", round_, version.label, "verified", said, so_far)


def choose(state: State, made: list[Version]) -> Stop | None:
    """The best version goes on to the next round, or the loop stops: nothing of this round is faster."""
    best = state.session.best()
    if best is state.current or best.number not in {v.number for v in made}:
        return Stop("nothing_faster", {"round": state.round, "version": state.current.label, "waiting": _waiting(state.session)})
    state.current = best
    return None


def _waiting(session: Session) -> str:
    """What the user must know when the fastest right version waits for their confirmation."""
    top = session.waiting()
    if top is None:
        return ""
    return (
        f" that the judge did not flag: {top.label} is correct and {speed(top)} faster than the original, but"
        f" waits for your second look: {top.warnings[0].rstrip('.')}. Check it, then confirm it to use it (Confirm in"
        f" the notebook's panel, which opens on it, or result.confirm({top.number}))"
    )


def notes(state: State, parts: Parts, given: tuple[str, ...]) -> tuple[str, ...]:
    """What the user must know at the end: the notes given, that round 1 reused a profile, and a top bottleneck the
    rewriter cannot fix."""
    extra = list(given) + ([state.reused] if state.reused else [])
    if state.profile is not None and state.profile.mismatch:
        extra.insert(0, f"The replayed report {state.profile.origin}: {state.profile.mismatch}.")
    diagnosed, name = state.diagnosed, parts.rewriter.name
    if diagnosed is not None and diagnosed.top_bottleneck in cannot_fix(parts.rewriter):
        extra.append(
            f"The top bottleneck of {diagnosed.label}, {diagnosed.top_bottleneck}, needs a change to what the code does"
            f" (its hint says which); the {name} rewriter cannot make it. Make the change yourself, or try --rewriter llm."
        )
    return tuple(extra)


def finish(state: State, parts: Parts, stop: Stop) -> Stop:
    """The best version profiled for the before/after view (unless it was just profiled, or replay); the stop, with
    where that profile puts it on its roof."""
    best = state.session.best()
    report = state.session.folder(best) / REPORT
    if not parts.profiler.profiles_cells or best is state.session.original:
        return stop
    own = state.profile if best is state.diagnosed else None  # the best version's profile
    top = state.bottlenecks[0][0] if state.bottlenecks else None
    if stop.kind == "near_roof":
        own = None  # the stop said where it stands
    if not report.exists():
        message = f"profiling the best version {best.label} for the before/after view"
        parts.say(Event(message, version=best.label, state="profiling"))
        own = parts.profiler.collect(CellSource(best.source), state.settings, output=report)
    if own is not None and top is not None and (roof := roof_note(own, top, best)):
        return Stop(stop.kind, stop.data, f"; {roof}")
    return stop
