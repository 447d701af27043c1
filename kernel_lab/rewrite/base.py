"""What every rewriter takes and gives back."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from kernel_lab.rewrite.budget import Budget


@dataclass(frozen=True)
class Attempt:
    """One earlier version and how it did, so a rewriter does not revisit dead ends."""

    explanation: str  # what was changed
    outcome: str  # e.g. "correct, 1.8x faster", "wrong: max error 3.2 at [17]", "did not compile: ..."
    source: str = ""


@dataclass(frozen=True)
class RewriteContext:
    """Everything a rewriter may use to propose the next version of a cell."""

    source: str  # the current version of the cell (kernels, make_inputs, run, ...)
    bottlenecks: Sequence[Mapping[str, Any]]  # ranked, as Bottleneck.to_dict() gives them
    device: str = "unknown GPU"
    history: Sequence[Attempt] = ()
    language: str = "triton"  # "triton" or "cuda"
    interpreted: bool = False  # measured by Triton's CPU interpreter, which ignores num_warps and num_stages
    original: str = ""  # the user's own cell (v000): its harness is kept in every answer ("": ``source``)
    cell: str = ""  # the whole-cell reading, as a prompt section (analysis.cell.prompt_section), when profiled
    roof: str = ""  # where the current version's top kernel stands on its roof ("45% of the DRAM roof"), when known


@dataclass(frozen=True)
class Candidate:
    """A proposed new version of the whole cell."""

    source: str
    explanation: str  # what changed and why, for the user
    answers: str = ""  # the bottleneck kind this change addresses
    origin: str = ""  # "llm:<model>" or "search"
    meta: Mapping[str, Any] = field(default_factory=dict)


class Rewriter(Protocol):
    """Anything that proposes candidates for a cell (see :mod:`kernel_lab.rewrite` for plug-ins)."""

    name: str
    cannot_fix: frozenset[str]  # bottleneck kinds it cannot address

    def propose(self, context: RewriteContext, n: int = 1) -> list[Candidate]:
        """Up to ``n`` candidates (possibly none); raises KernelLabError subclasses with a fix."""
        ...


@dataclass(frozen=True)
class Measured:
    """Quick measurements of launch-parameter variants (:mod:`kernel_lab.verify.screen`): each variant's time (ms),
    or why it has none ("wrong: ..." when its outputs differ from the original's), and the original's launches as
    they ran (kernel -> parameter -> value: what a computed block size or an autotuner's choice came to)."""

    times: tuple[float | None, ...] = ()
    reasons: tuple[str, ...] = ()
    launched: Mapping[str, Mapping[str, int]] = field(default_factory=dict)


#: quick measurements of variants (whole cells): their times, in the order given
Measure = Callable[[list[str]], Measured]


@dataclass(frozen=True)
class Explored:
    """What an exploring rewriter found: the candidates for the judge, fastest first, and what the search did."""

    candidates: tuple[Candidate, ...] = ()
    screened: int = 0  # variants measured
    recalled: int = 0  # variants known from an earlier explore (the same screen), not measured again
    settled: str = ""  # why nothing was measured: the start is as fast as the best place known, or ""
    unrun: tuple[str, ...] = ()  # why each variant measured has no time (it failed, or was wrong, in the screen)
    notes: tuple[str, ...] = ()  # what the user should know: knobs that cannot change, and why


@runtime_checkable
class Exploring(Protocol):
    """A rewriter that can search with quick measurements (launch-parameter variants only, see
    :mod:`kernel_lab.verify.screen`), and then propose the best it found for the full judge."""

    def explore(self, context: RewriteContext, measure: Measure, *, n: int, budget_s: float, most: int) -> Explored:
        """Up to ``n`` candidates, the fastest measured first, after at most ``most`` measured variants."""
        ...


# --- the agent: a rewriter that works with the judge, the profiler and the screen, turn by turn --------------------


@dataclass(frozen=True)
class Timed:
    """The judge's times of a candidate (ms), interleaved with the original's in one run: medians and spreads."""

    time_ms: float
    spread_ms: float
    reference_ms: float
    reference_spread_ms: float
    speedup: float  # reference_ms / time_ms
    significant: bool


@dataclass(frozen=True)
class Profiled:
    """What a correct candidate's own profile says: its bottlenecks ranked (dicts, as in :class:`RewriteContext`),
    where it stands on its roof, the whole-cell reading; or, with none of these, why it was not profiled."""

    bottlenecks: Sequence[Mapping[str, Any]] = ()
    roof: str = ""  # "45% of the DRAM roof"
    at_roof: bool = False  # at or past the share of the roof that binds where the loop stops (loop.roof.NEAR_ROOF)
    cell: str = ""  # the whole-cell reading as a prompt section
    note: str = ""  # what to know of this profile (a replayed report: not this version's own), or why there is none


@dataclass(frozen=True)
class Feedback:
    """The judge's verdict on one candidate, as the loop hands it to a rewriter (filled from a Verdict): correct or
    not and why (``failure``: its kind, ``failure_words``: the kind in words), the warnings that block it and the
    notes (``(kind, text)``), its times; ``profiled`` is added for a correct candidate."""

    version: str  # the session's label of the version it became ("v004")
    correct: bool
    reason: str
    source: str = ""  # the candidate as judged (the user's harness put back)
    failure: str | None = None
    failure_words: str = ""
    warnings: tuple[tuple[str, str], ...] = ()
    notes: tuple[tuple[str, str], ...] = ()
    checks: int = 0  # input sets compared
    max_rel_err: float | None = None
    timing: Timed | None = None
    profiled: Profiled | None = None


@dataclass(frozen=True)
class Turn:
    """Who asks a tool: a worker (1-based) of a rewriter, at its turn (1-based), and the direction it took."""

    worker: int
    turn: int
    direction: str = ""


class Tools(Protocol):
    """What the loop lends a working rewriter for a round: the judge, the profiler and the screen, bound to the
    session (every candidate judged becomes a version), and a way to be heard. Safe to call from several threads:
    the judge, the profiler and the screen take turns."""

    @property
    def screening(self) -> bool:
        """Whether :meth:`screen` measures (else launch configurations go to the judge directly)."""
        ...

    def best(self) -> tuple[str, float | None]:
        """The best version so far, in this round or earlier ones: (its label, its speedup; None: the original)."""
        ...

    def judge(self, candidates: Sequence[Candidate], turn: Turn) -> list[Feedback]:
        """Each candidate made a version of the session and judged in full; never raises."""
        ...

    def profile(self, feedback: Feedback) -> Profiled:
        """The profile of a version the judge found correct, read for the rewriter."""
        ...

    def screen(self, variants: list[str]) -> Measured:
        """Quick measurements of launch-parameter variants of the current version (see :data:`Measure`)."""
        ...

    def say(self, turn: Turn, message: str, version: str | None = None) -> None:
        """A progress line of a worker, for the panel and the terminal."""
        ...

    def keep(self, version: str, transcript: Mapping[str, Any]) -> None:
        """Keep what the model was told and answered up to ``version`` beside it in the session."""
        ...


@runtime_checkable
class Working(Protocol):
    """A rewriter that works a round with the loop's tools (an agent): it judges its own candidates as it makes
    them, reads their verdicts and profiles, and goes on until the round's turns or the budget are spent."""

    def work(self, context: RewriteContext, tools: Tools, budget: Budget) -> Explored:
        """The round's work: the versions are in the session (made by ``tools.judge``); what it returns says what it
        screened and why it stopped (``notes``)."""
        ...
