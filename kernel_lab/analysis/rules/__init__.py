"""The conductor's rules: one module per bottleneck kind, built in or shipped by a plug-in package.

A rule module declares:

``KIND``
    the bottleneck id it reports (see the README's vocabulary).
``NEEDS``
    alternative sets of metric names; the rule runs when one set is complete, else its kind is listed
    as "not evaluated" with the missing metrics.
``READS`` (optional)
    further metrics it reads when present (``*`` wildcards allowed). ``evaluate`` may read only what
    ``NEEDS`` and ``READS`` declare (device attributes are always readable): reading anything else is
    reported as a bug of the rule, not guessed around.
``REGIME`` (optional, default False)
    True for kinds that say which roof a kernel is under (memory-, compute-, latency-bound) rather
    than a specific cause; the conductor gives regimes only what the causes leave unexplained.
``NCU_RULES``, ``NCU_TITLES`` (optional)
    the Nsight Compute rule identifiers and rule-message titles it speaks for; those messages are
    attached to its findings.
``SEARCH`` (optional)
    ``(block sizes, warps, why)``: the direction (+1 bigger / more, -1 smaller / fewer, 0 leave) the
    built-in optimizer tries first for this bottleneck; None when launch parameters cannot fix it.
``evaluate(kernel) -> Bottleneck | None``
    the finding, with its score (the share of the launch's time it accounts for, 0..1).

Plug-ins: a package lists its rule modules under the entry-point group ``kernel_lab.rules``
(``my_rule = "my_package.my_rule"``); they are validated when loaded.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from fnmatch import translate
from functools import cache, cached_property
from importlib import import_module
from importlib.metadata import entry_points
from types import ModuleType

from kernel_lab.errors import KernelLabError
from kernel_lab.models import KINDS, Bottleneck, Kernel

BUILTIN = KINDS  # one module per bottleneck kind, named for it
ENTRY_POINTS = "kernel_lab.rules"
ALWAYS_READABLE = "device__attribute_"
Search = tuple[int, int, str]


class UndeclaredMetric(KernelLabError):
    """A rule read a metric it did not declare in NEEDS or READS."""

    def __init__(self, kind: str, metric: str) -> None:
        self.metric = metric
        super().__init__(f"The {kind} rule read {metric}, which it does not declare.", fix="Add it to the rule's NEEDS or READS.")


class _Declared(Mapping[str, float]):
    """A kernel's metrics as one rule may see them: the declared ones; reading another raises."""

    def __init__(self, metrics: Mapping[str, float], rule: Rule) -> None:
        self._metrics, self._rule = metrics, rule

    def _check(self, name: str) -> None:
        if not self._rule.declares(name):
            raise UndeclaredMetric(self._rule.kind, name)

    def __getitem__(self, name: str) -> float:
        self._check(name)
        return self._metrics[name]

    def __contains__(self, name: object) -> bool:
        self._check(str(name))
        return name in self._metrics

    def __iter__(self) -> Iterator[str]:
        return (name for name in self._metrics if self._rule.declares(name))

    def __len__(self) -> int:
        return sum(1 for _ in self)


@dataclass(frozen=True)
class Rule:
    """A validated rule module (see the package docstring)."""

    kind: str
    needs: tuple[tuple[str, ...], ...]
    reads: tuple[str, ...]
    regime: bool
    ncu_rules: tuple[str, ...]
    ncu_titles: tuple[str, ...]
    search: Search | None
    evaluate_fn: Callable[[Kernel], Bottleneck | None]
    origin: str

    @classmethod
    def from_module(cls, module: ModuleType) -> Rule:
        """Check a rule module's declarations; raise a one-line error naming what is wrong."""
        where = module.__name__

        def bad(what: str) -> KernelLabError:
            return KernelLabError(f"Rule module {where}: {what}.", fix="See kernel_lab.analysis.rules for what a rule declares.")

        kind, needs, evaluate = getattr(module, "KIND", None), getattr(module, "NEEDS", None), getattr(module, "evaluate", None)
        if not isinstance(kind, str) or not re.fullmatch(r"[a-z][a-z0-9_]*", kind):
            raise bad("KIND must be a lower_case id")
        if not (
            isinstance(needs, tuple) and needs and all(isinstance(a, tuple) and all(isinstance(m, str) for m in a) for a in needs)
        ):
            raise bad("NEEDS must be a non-empty tuple of tuples of metric names")
        if not callable(evaluate):
            raise bad("it defines no evaluate(kernel) function")
        reads, search = getattr(module, "READS", ()), getattr(module, "SEARCH", None)
        if not (isinstance(reads, tuple) and all(isinstance(m, str) for m in reads)):
            raise bad("READS must be a tuple of metric names")
        if search is not None and not (isinstance(search, tuple) and len(search) == 3 and {search[0], search[1]} <= {-1, 0, 1}):
            raise bad("SEARCH must be None or (block direction, warp direction, why) with directions -1, 0 or +1")
        return cls(
            kind,
            needs,
            reads,
            bool(getattr(module, "REGIME", False)),
            tuple(getattr(module, "NCU_RULES", ())),
            tuple(getattr(module, "NCU_TITLES", ())),
            search,
            evaluate,
            where,
        )

    @cached_property
    def _pattern(self) -> re.Pattern[str]:
        declared = [m for alternative in self.needs for m in alternative] + list(self.reads)
        return re.compile("|".join(translate(m) if "*" in m else re.escape(m) + r"\Z" for m in declared))

    def declares(self, metric: str) -> bool:
        return metric.startswith(ALWAYS_READABLE) or bool(self._pattern.match(metric))

    def missing(self, kernel: Kernel) -> list[str]:
        """Metrics missing from the closest alternative of NEEDS, or [] when one alternative is complete."""
        gaps = [[m for m in alternative if not kernel.has(m)] for alternative in self.needs]
        return min(gaps, key=len)

    def evaluate(self, kernel: Kernel) -> Bottleneck | None:
        """Run the rule on ``kernel``, letting it read only what it declared."""
        view = replace(kernel, metrics=_Declared(kernel.metrics, self))
        return self.evaluate_fn(view)


@cache
def rules() -> tuple[Rule, ...]:
    """The built-in rules, then the plug-ins' (entry-point group ``kernel_lab.rules``), validated."""
    modules = [import_module(f"{__name__}.{name}") for name in BUILTIN]
    for entry in entry_points(group=ENTRY_POINTS):
        try:
            modules.append(entry.load())
        except Exception as exc:  # noqa: BLE001 - a broken plug-in gets a one-line error naming it
            raise KernelLabError(
                f"The rule plug-in {entry.name} ({entry.value}) failed to load: {exc}.",
                fix="Fix or uninstall the package that provides it.",
            ) from None
    loaded = [Rule.from_module(m) for m in modules]
    seen: dict[str, str] = {}
    for rule in loaded:
        if rule.kind in seen:
            raise KernelLabError(
                f"Two rules report the kind {rule.kind!r}: {seen[rule.kind]} and {rule.origin}.",
                fix="Give the plug-in's rule a kind of its own.",
            )
        seen[rule.kind] = rule.origin
    return tuple(loaded)


@cache
def regimes() -> frozenset[str]:
    """Kinds that describe a roof rather than a cause."""
    return frozenset(r.kind for r in rules() if r.regime)


def kinds() -> tuple[str, ...]:
    """Every kind a rule can report: the vocabulary, and the plug-ins' kinds."""
    return tuple(r.kind for r in rules())


def search_guidance() -> dict[str, Search]:
    """Kind -> (block direction, warp direction, why) for the built-in optimizer."""
    return {r.kind: r.search for r in rules() if r.search is not None}


@cache
def ncu_kinds() -> tuple[Mapping[str, str], Mapping[str, str]]:
    """(Nsight Compute rule id -> kind, rule-message title -> kind), from what the rules speak for."""
    by_rule = {name: r.kind for r in rules() for name in r.ncu_rules}
    by_title = {title: r.kind for r in rules() for title in r.ncu_titles}
    return by_rule, by_title
