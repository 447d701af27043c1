"""Command-line options of the CLI and the magics, derived from :class:`~kernel_lab.settings.Settings`.

Options default to None ("not given"), so that what the user did not type falls through to
``%config``, the environment and the settings' defaults, in that order.
"""

from __future__ import annotations

import argparse
from dataclasses import fields
from typing import Any

from kernel_lab.settings import Settings

PROFILE = ("kernels", "all_kernels", "sections", "section_set", "launch_count", "warmup", "timeout")
OPTIMIZE = (
    "rounds",
    "rewriter",
    "model",
    "base_url",
    "llm_workers",
    "llm_turns",
    "llm_requests",
    "llm_tokens",
    "llm_cost",
    "llm_seconds",
    "price_in",
    "price_out",
    "llm_max_tokens",
    "reasoning",
    "candidates",
    "screen",
    "screen_budget",
    "time_budget",
    "seeds",
    "rtol",
    "atol",
    "root",
)


def add(parser: argparse.ArgumentParser, names: tuple[str, ...]) -> None:
    """Add the options for these settings, with their help and defaults."""
    from kernel_lab.rewrite import available

    for f in fields(Settings):
        if f.name not in names:
            continue
        flags = f.metadata["flags"] or (f"--{f.name.replace('_', '-')}",)
        default = f.default
        help_text = f.metadata["help"] + (f" (default {default})" if default not in (None, False, True) else "")
        kind = str(f.type)
        if f.name == "warmup":
            parser.add_argument("--no-warmup", dest="warmup", action="store_const", const=False, default=None, help=help_text)
        elif kind.startswith("bool"):
            parser.add_argument(*flags, dest=f.name, action="store_const", const=True, default=None, help=help_text)
        elif kind.startswith("tuple"):
            parser.add_argument(*flags, dest=f.name, action="append", default=None, help=help_text)
        else:
            convert = int if kind.startswith("int") else float if kind.startswith("float") else str
            choices = list(available()) if f.name == "rewriter" else None
            parser.add_argument(*flags, dest=f.name, type=convert, default=None, choices=choices, help=help_text)


def given(args: argparse.Namespace, names: tuple[str, ...]) -> dict[str, Any]:
    """The settings the user gave on the command line (tuples for repeated options)."""
    out = {}
    for name in names:
        value = getattr(args, name, None)
        if value is not None:
            out[name] = tuple(value) if isinstance(value, list) else value
    return out
