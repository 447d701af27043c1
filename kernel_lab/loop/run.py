"""The loop itself (see the package docstring). Candidates run only in the judge's processes."""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from kernel_lab import metrics as M
from kernel_lab.analysis import conductor
from kernel_lab.analysis.roofline import roofline
from kernel_lab.cells import CellSource, language
from kernel_lab.errors import KernelLabError
from kernel_lab.models import Bottleneck, Kernel, Profile
from kernel_lab.profiling import Profiler, start_ahead
from kernel_lab.rewrite import cannot_fix, why_nothing
from kernel_lab.rewrite.base import Attempt, Explored, Exploring, RewriteContext, Rewriter
from kernel_lab.rewrite.launch import parameter_only
from kernel_lab.session import Session, Version
from kernel_lab.settings import Settings
from kernel_lab.verify import Judging, Verdict
from kernel_lab.verify.screen import Screening

MIN_GAIN = 0.05  # stop when no bottleneck is estimated to hold more than this share of the time
NEAR_ROOF = 0.9  # stop when the top kernel reaches this fraction of the roof that bounds it
SAME_SIZE = 0.9  # a version the judge timed under this share of its profiled kernel time ran another size
REPORT = "profile.ncu-rep"


@dataclass(frozen=True)
class Event:
    """What the loop is doing, for a progress display: one line, and where in the loop it is."""

    message: str
    round: int | None = None
    version: str | None = None  # "v003"
    state: str | None = None  # "note", "profiling", "rewriting", "proposed", "checking", "timing", "done", "verified"
    outcome: str | None = None  # for "verified": how the version did, in words
    best: str | None = None  # for "verified": the best version so far, e.g. "v002, 1.84x"


Events = Callable[[Event], None]


@dataclass(frozen=True)
class OptimizeRun:
    """What a run of the loop leaves: the session (every version with its verdict), why it stopped, notes."""

    session: Session
    stopped: str
    notes: tuple[str, ...] = ()


def outcome(v: Version) -> str:
    """How a verified version did, in words."""
    if v.correct is False:
        return f"wrong or failed: {v.reason}"
    if v.speedup is None:
        return "correct, not timed"
    noise = "" if v.significant else " (within noise)"
    return f"correct, {v.speedup:.2f}x vs the original{noise}"


def record(session: Session, version: Version, verdict: Verdict) -> None:
    """Store a verdict in the version (and the reference's time in the original, once)."""
    version.correct, version.reason = verdict.correct, verdict.reason
    version.warnings, version.notes = list(verdict.warnings), list(verdict.notes)
    if verdict.timing is not None:
        t = verdict.timing
        version.time_ms, version.spread_ms, version.reference_ms = t.candidate_ms, t.candidate_spread, t.reference_ms
        version.speedup, version.significant = t.speedup, t.significant
        if session.original.time_ms is None:
            session.original.time_ms, session.original.spread_ms = t.reference_ms, t.reference_spread
            session.save(session.original)
    session.save(version)


def ranked(profile: Profile) -> list[tuple[str, Bottleneck]]:
    """(kernel name, bottleneck) of every kernel, the costliest first."""
    found = [(d.kernel.name, b) for d in conductor.diagnose(profile) for b in d.bottlenecks]
    return sorted(found, key=lambda kb: -kb[1].score)


def _launches(profile: Profile, kernel: str) -> list[Kernel]:
    """The kernel's launches in the profile (its first launch when none has that name)."""
    return [k for k in profile.kernels if k.name == kernel] or list(profile.kernels[:1])


def _reached(profile: Profile, kernel: str) -> tuple[float, str] | None:
    """(fraction, roof) reached by the kernel's costliest launch in the profile, if its roofline says."""
    launches = _launches(profile, kernel)
    if not launches:
        return None
    return roofline(max(launches, key=lambda k: k.get(M.DURATION) or 0)).reached()


def near_roof(profile: Profile, kernel: str) -> str | None:
    """'93% of the DRAM roof' when the kernel (its costliest launch) is within reach of its roof, else None."""
    reached = _reached(profile, kernel)
    return f"{reached[0]:.0%} of the {reached[1]} roof" if reached and reached[0] >= NEAR_ROOF else None


def placed(profile: Profile, kernel: str, profiled: Version, current: Version) -> tuple[float, str] | None:
    """(the estimated share of its roof, how it was estimated and where that puts it) of ``current`` when it changes only launch
    parameters of ``profiled`` (whose profile this is: the same code, so the same work and much the same traffic)
    and the judge timed it; else None.

    The estimate takes the time the judge saw saved per call off the kernel's profiled duration: the judge's times
    also hold what a call costs besides the kernel (~0.1 ms on the H100: the launch from an idle GPU, and what its
    timing loop adds; benchmarks/judge_timing_gap_h100), which a ratio of those times would count as the kernel's,
    and so read too low. Where the judge's times cannot be the profiled kernel's (the profiled version ran faster
    than its kernel under ncu, or more time was saved than the kernel took: another size), their ratio serves, as a
    lower bound."""
    before = 1.0 if profiled.number == 0 else profiled.speedup
    reached = _reached(profile, kernel)
    kernel_ms = sum(k.get(M.DURATION) or 0.0 for k in _launches(profile, kernel)) / 1e6
    if (
        reached is None
        or not before
        or not current.time_ms
        or not current.reference_ms
        or not kernel_ms
        or not parameter_only(profiled.source, current.source)
    ):
        return None
    was_ms = current.reference_ms / before  # the profiled version's time in the judge's run of ``current``
    saved_ms, gain = was_ms - current.time_ms, was_ms / current.time_ms
    roof = reached[1]
    if kernel_ms * SAME_SIZE <= was_ms and saved_ms < kernel_ms:
        estimate = reached[0] * kernel_ms / (kernel_ms - saved_ms)
        how = f"{saved_ms:.3f} ms faster per call: {profiled.label}'s {kernel_ms:.3f} ms kernel then at"
        where = f"about {estimate:.0%} of the {roof} roof"
    else:  # the judge's times are not those of the profiled kernel (another size): their ratio, a lower bound
        estimate = reached[0] * gain
        how = f"at {gain:.2f}x {profiled.label}'s speed (timed on another size than profiled),"
        where = f"{estimate:.0%} or more of the {roof} roof"
    return estimate, f"{how} {where if estimate < 1 else f'the {roof} roof or past it by that profile'}"


def carried(profile: Profile, kernel: str, profiled: Version, current: Version) -> str | None:
    """Why ``current`` need not be profiled before the next round, or None when it must be: it changes only launch
    parameters of ``profiled`` and the judge timed it (:func:`placed` says where that puts it). The search's next
    screen measures what it needs; the best version's profile at the end reads its roof."""
    where = placed(profile, kernel, profiled, current)
    if where is None:
        return None
    return (
        f"{current.label} not profiled (only launch parameters changed since {profiled.label}): {where[1]};"
        f" the search goes on from {profiled.label}'s diagnosis"
    )


def _roof_note(profile: Profile, kernel: str, version: Version) -> str | None:
    """Where the best version's own profile puts it on its roof, in words (the stop message ends with it)."""
    reached = _reached(profile, kernel)
    if reached is None:
        return None
    room = ": little is left to gain" if reached[0] >= NEAR_ROOF else ""
    return f"{version.label} runs at {reached[0]:.0%} of the {reached[1]} roof by its profile{room}"


def _flagged(session: Session) -> str:
    """What the user must know when the fastest right version waits for their confirmation."""
    top = session.waiting()
    if top is None:
        return ""
    return (
        f" that the judge did not flag: {top.label} is correct and {top.speedup:.2f}x faster than the original, but"
        f" waits for your second look: {top.warnings[0].rstrip('.')}. Check it, then confirm it to use it (Confirm in"
        f" the notebook's panel, which opens on it, or result.confirm({top.number}))"
    )


def _configurations(n: int) -> str:
    return f"{n} launch configuration{'s' * (n != 1)}"


def _explored(
    rewriter: Rewriter, context: RewriteContext, settings: Settings, screen: Screening | None, say: Events, round_: int
) -> Explored:
    """The rewriter's candidates: explored with the screen's quick measurements when both can, else proposed."""
    if screen is None or settings.screen <= 0 or not isinstance(rewriter, Exploring):
        return Explored(tuple(rewriter.propose(context, n=settings.candidates)))
    started = time.monotonic()
    say(Event(f"round {round_}: screening launch configurations", round_, state="screening"))
    try:
        found = rewriter.explore(
            context, screen.measure, n=settings.candidates, budget_s=settings.screen_budget, most=settings.screen
        )
    finally:
        screen.rest()  # the judge has the GPU to itself
    for note in found.notes if round_ == 1 else ():
        say(Event(f"round {round_}: {note}", round_, state="note"))
    if found.settled:
        say(Event(f"round {round_}: nothing to screen: the version {found.settled}", round_, state="screening"))
        return found
    n = len(found.candidates)
    say(
        Event(
            f"round {round_}: screened {_configurations(found.screened)} in {time.monotonic() - started:.0f} s"
            + (f" ({found.recalled} more known from earlier rounds)" if found.recalled else "")
            + (
                f"; the {n} fastest go to the judge"
                if n > 1
                else "; the fastest goes to the judge"
                if n
                else "; none is faster than the version they vary"
            ),
            round_,
            state="screening",
        )
    )
    return found


def optimize(
    cell: CellSource,
    settings: Settings,
    *,
    profiler: Profiler,
    rewriter: Rewriter,
    judge: Judging,
    screen: Screening | None = None,
    notes: tuple[str, ...] = (),
    on_event: Events | None = None,
    first: Profile | None = None,
) -> OptimizeRun:
    """Take the cell's kernel to a faster verified version; every version is kept in a session on disk.

    ``screen``: quick measurements of launch-parameter variants, for a rewriter that explores with them.
    ``first``: a profile of this very cell (what ``%%profile`` just gave): round 1 starts from it."""
    say = on_event or (lambda event: None)
    for note in notes:
        say(Event(note, state="note"))
    started = time.monotonic()
    session = Session.create(settings.root, cell.name, cell.text)
    current = session.original
    history: list[Attempt] = []
    diagnosed: Version | None = None  # the last version profiled
    profile: Profile | None = None  # its profile
    bottlenecks: list[tuple[str, Bottleneck]] = []  # its bottlenecks, the costliest first
    # a version that changes only launch parameters of the last one profiled is not profiled again while the search
    # measures each next step itself (see carried)
    searching = screen is not None and settings.screen > 0 and isinstance(rewriter, Exploring)
    reused = ""  # what was said when round 1 started from ``first``
    stopped = f"ran {settings.rounds} round(s)"
    for round_ in range(1, settings.rounds + 1):
        if settings.time_budget is not None and time.monotonic() - started > settings.time_budget:
            stopped = f"time budget of {settings.time_budget:.0f} s spent"
            break
        if not profiler.profiles_cells and round_ > 1:
            stopped = f"{profiler.name} mode: one round only (the recorded report cannot show a new version)"
            break
        why_not = carried(profile, bottlenecks[0][0], diagnosed, current) if searching and diagnosed and profile else None
        if why_not is not None:
            say(Event(f"round {round_}: {why_not}", round_, current.label, "note"))
        else:
            report = session.folder(current) / REPORT
            if first is not None and current is session.original:
                profile = first
                if Path(first.origin).suffix == ".ncu-rep" and Path(first.origin).is_file():
                    shutil.copyfile(first.origin, report)
                reused = (
                    f"v000 was not profiled again: round 1 started from the profile this cell already had ({first.collector})."
                )
                say(Event(reused, round_, state="note"))
            else:
                if profiler.profiles_cells:
                    say(Event(f"round {round_}: profiling {current.label}", round_, current.label, "profiling"))
                profile = profiler.collect(CellSource(current.source), settings, output=report)
            if profile.replay:
                say(
                    Event(
                        f"round {round_}: REPLAYING the recorded report {profile.origin} instead of profiling {current.label}"
                        " (no GPU used)",
                        round_,
                        current.label,
                        "profiling",
                    )
                )
            bottlenecks = ranked(profile)
            current.top_bottleneck = bottlenecks[0][1].kind if bottlenecks else None
            session.save(current)
            diagnosed = current
            if not bottlenecks or bottlenecks[0][1].score < MIN_GAIN:
                stopped = f"no bottleneck holds more than {MIN_GAIN:.0%} of the time in {current.label}"
                break
            if (near := near_roof(profile, bottlenecks[0][0])) is not None:
                stopped = f"{current.label} reaches {near}: little is left to gain"
                break
        assert profile is not None and diagnosed is not None  # profiled above, or carried from the last profile
        top = bottlenecks[0][1]
        of = "" if diagnosed is current else f" in {diagnosed.label}"
        say(
            Event(
                f"round {round_}: top bottleneck{of} {top.kind} ({top.score:.2f}); rewriting with {rewriter.name}",
                round_,
                current.label,
                "rewriting",
            )
        )
        context = RewriteContext(
            source=current.source,
            bottlenecks=[{**b.to_dict(), "kernel": kernel} for kernel, b in bottlenecks[:5]],
            device=profile.kernels[0].device if profile.kernels else "unknown GPU",
            history=tuple(history),
            language=language(current.source),
        )
        try:
            explored = _explored(rewriter, context, settings, screen, say, round_)
        except KernelLabError as err:
            stopped = f"round {round_}: the {rewriter.name} rewriter failed: {err}"
            break
        proposals = list(explored.candidates)
        if not proposals and explored.settled:
            stopped = f"{rewriter.name}: {current.label} {explored.settled}"
            break
        if not proposals and (explored.screened or explored.recalled):
            stopped = (
                f"{rewriter.name} screened {_configurations(explored.screened + explored.recalled)} around"
                f" {current.label} (in this round or earlier ones): none untried was faster"
            )
            break
        if not proposals:
            stopped = f"{rewriter.name} had nothing more to propose for {top.kind}"
            if why := why_nothing(rewriter, current.source):
                stopped += f" ({why})"
            break
        made = [
            session.add(
                c.source,
                origin=c.origin,
                parent=current.number,
                explanation=c.explanation,
                answers=c.answers,
                screen_ms=c.meta.get("screen_ms"),
            )
            for c in proposals
        ]
        for version, candidate in zip(made, proposals):
            say(Event(f"round {round_}: {version.label} proposed: {candidate.explanation}", round_, version.label, "proposed"))

        def judging(index: int, state: str, round_: int = round_, made: list[Version] = made) -> None:
            say(Event(f"round {round_}: {made[index].label} {state}", round_, made[index].label, state))

        # the next profile's process (where the profiler starts one ahead) loads while the judge works
        start_ahead(profiler, CellSource(current.source), settings)
        for version, candidate, verdict in zip(made, proposals, judge.check_many([c.source for c in proposals], judging)):
            record(session, version, verdict)
            leader = session.best()
            so_far = (
                f"{leader.label}, {leader.speedup:.2f}x" if leader is not session.original and leader.speedup else "the original"
            )
            say(
                Event(
                    f"round {round_}: {version.label} {outcome(version)}",
                    round_,
                    version.label,
                    "verified",
                    outcome(version),
                    so_far,
                )
            )
            history.append(Attempt(candidate.explanation, outcome(version)))
        best = session.best()
        if best is current or best.number not in {v.number for v in made}:
            stopped = f"round {round_} found nothing faster than {current.label}" + _flagged(session)
            break
        current = best
    extra = list(notes) + ([reused] if reused else [])
    if diagnosed is not None and diagnosed.top_bottleneck in cannot_fix(rewriter):
        extra.append(
            f"The top bottleneck of {diagnosed.label}, {diagnosed.top_bottleneck}, needs a change to what the code does"
            f" (its hint says which); the {rewriter.name} rewriter cannot make it. Make the change yourself, or try"
            " --rewriter llm."
        )
    best = session.best()
    report = session.folder(best) / REPORT
    if profiler.profiles_cells and best is not session.original:
        own = profile if best is diagnosed else None  # the best version's profile
        if own is not None and bottlenecks and near_roof(own, bottlenecks[0][0]) is not None:
            own = None  # the stop said where it stands
        if not report.exists():
            say(
                Event(f"profiling the best version {best.label} for the before/after view", version=best.label, state="profiling")
            )
            own = profiler.collect(CellSource(best.source), settings, output=report)
        if own is not None and bottlenecks and (roof := _roof_note(own, bottlenecks[0][0], best)):
            stopped += f"; {roof}"
    return OptimizeRun(session, stopped, tuple(extra))
