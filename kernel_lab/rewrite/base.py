"""What every rewriter takes and gives back."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable


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
    notes: tuple[str, ...] = ()  # what the user should know: knobs that cannot change, and why


@runtime_checkable
class Exploring(Protocol):
    """A rewriter that can search with quick measurements (launch-parameter variants only, see
    :mod:`kernel_lab.verify.screen`), and then propose the best it found for the full judge."""

    def explore(self, context: RewriteContext, measure: Measure, *, n: int, budget_s: float, most: int) -> Explored:
        """Up to ``n`` candidates, the fastest measured first, after at most ``most`` measured variants."""
        ...
