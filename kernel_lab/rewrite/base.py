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


#: the time (ms) of each variant on the screening input; None where a variant failed
Measure = Callable[[list[str]], list[float | None]]


@runtime_checkable
class Exploring(Protocol):
    """A rewriter that can search with quick measurements (launch-parameter variants only, see
    :mod:`kernel_lab.verify.screen`), and then propose the best it found for the full judge."""

    screened: int  # variants measured by the last explore
    recalled: int  # variants the last explore knew from an earlier one (the same screen), not measured again
    settled: str  # why the last explore measured nothing (its start is as fast as the best place known), or ""

    def explore(self, context: RewriteContext, measure: Measure, *, n: int, budget_s: float, most: int) -> list[Candidate]:
        """Up to ``n`` candidates, the fastest measured first, after at most ``most`` measured variants."""
        ...
