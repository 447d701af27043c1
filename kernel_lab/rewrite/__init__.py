"""Rewriters: propose new versions of a cell from its diagnosis.

Built in: ``search`` (the built-in optimizer: launch parameters and known CUDA transformations) and
``llm`` (any OpenAI-compatible chat model, as an agent: :mod:`kernel_lab.rewrite.agent`). A package can add its own under the entry-point group
``kernel_lab.rewriters`` (``mine = "my_package.module:MyRewriter"``): the object named there is a class
with ``from_settings(settings, say)`` or a function ``(settings, say) -> Rewriter``, and what it makes
must have a ``name``, a ``propose(context, n)`` method and, optionally, ``cannot_fix`` (the bottleneck
kinds it cannot address, so that Kernel Lab can say so) and ``why_nothing(source)`` (when it proposes
nothing for a cell, why, in words, or None).
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module
from importlib.metadata import entry_points
from typing import Any

from kernel_lab.errors import KernelLabError
from kernel_lab.rewrite.base import Rewriter
from kernel_lab.settings import Settings

ENTRY_POINTS = "kernel_lab.rewriters"
BUILTIN = {"search": "kernel_lab.rewrite.search:SearchRewriter", "llm": "kernel_lab.rewrite.agent:LLMAgent"}
Say = Callable[[str], None]


def available() -> dict[str, str]:
    """Rewriter name -> where it is defined (``module:attribute``): the built-ins, then the plug-ins."""
    found = dict(BUILTIN)
    for entry in entry_points(group=ENTRY_POINTS):
        found.setdefault(entry.name, entry.value)
    return found


def make(name: str, settings: Settings, say: Say | None = None) -> Rewriter:
    """The rewriter called ``name``, set up from ``settings``; ``say`` gets its progress messages."""
    known = available()
    if name not in known:
        raise KernelLabError(f"Unknown rewriter {name!r}.", fix=f"Use one of: {', '.join(known)}.")
    module, _, attribute = known[name].partition(":")
    try:
        target: Any = getattr(import_module(module), attribute)
    except (ImportError, AttributeError) as exc:
        raise KernelLabError(
            f"The rewriter {name!r} ({known[name]}) failed to load: {exc}.", fix="Fix or uninstall the package that provides it."
        ) from None
    rewriter = getattr(target, "from_settings", target)(settings, say or (lambda message: None))
    if not isinstance(getattr(rewriter, "name", None), str) or not callable(getattr(rewriter, "propose", None)):
        raise KernelLabError(
            f"The rewriter {name!r} ({known[name]}) has no name or no propose(context, n) method.",
            fix="See kernel_lab.rewrite for what a rewriter provides.",
        )
    return rewriter


def cannot_fix(rewriter: Rewriter) -> frozenset[str]:
    """The bottleneck kinds ``rewriter`` declares out of its reach (none if it does not say)."""
    return frozenset(getattr(rewriter, "cannot_fix", ()))


def why_nothing(rewriter: Rewriter, source: str) -> str | None:
    """Why ``rewriter`` proposes nothing for ``source``, when it says."""
    explain = getattr(rewriter, "why_nothing", None)
    return explain(source) if callable(explain) else None
