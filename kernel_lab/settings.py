"""One settings object for the CLI, the magics and the Python API.

Every option Kernel Lab takes is a field of :class:`Settings`, with its default, its help text and
the environment variable that can set it. One precedence rule everywhere::

    explicit (a keyword argument, a command-line or magic option)  >  %config KernelLabMagics.<field>
    >  the environment  >  the default

The CLI's and the magics' options and the ``%config`` traits are derived from these fields; the API
key is deliberately not one of them (it is read from ``OPENAI_API_KEY`` only, never stored).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import MISSING, dataclass, field, fields, replace
from typing import Any

from kernel_lab.errors import KernelLabError


def _option(default: Any, help: str, *, env: str | None = None, flags: tuple[str, ...] = (), cli: bool = True) -> Any:
    return field(default=default, metadata={"help": help, "env": env, "flags": flags, "cli": cli})


@dataclass(frozen=True)
class Settings:
    """Options of profiling and optimizing, with their defaults (see the module docstring for precedence)."""

    # -- profiling --------------------------------------------------------------------------------------
    ncu_path: str | None = _option(None, "path to ncu (else PATH and the usual install places)", env="KERNEL_LAB_NCU", cli=False)
    kernels: str | None = _option(
        None, "regex of kernel names to profile (default: the kernels defined in the cell)", flags=("-k", "--kernels")
    )
    all_kernels: bool = _option(False, "profile every kernel in the profiled range")
    sections: tuple[str, ...] | None = _option(
        None, "ncu section to collect (repeatable; default: Kernel Lab's targeted set)", flags=("--section",)
    )
    section_set: str | None = _option(None, "ncu section set instead of sections, e.g. full", flags=("--set",))
    launch_count: int = _option(20, "profile at most this many kernel launches", flags=("-c", "--launch-count"))
    warmup: bool = _option(True, "run the code once before the profiled run (--no-warmup: don't)")
    timeout: float = _option(600.0, "stop profiling after this many seconds")
    profile_ahead: bool = _option(
        True,
        "after %%profile in a fresh process, start the next one under ncu, waiting (one idle process with a CUDA context)",
        cli=False,
    )
    optimize_ahead: bool = _option(
        True,
        "after %%profile and %%optimize on a GPU, start the processes the next %%optimize screens and judges in"
        " (Python, torch and Triton loaded, no cell, no CUDA context: a few hundred MB of memory each)",
        cli=False,
    )
    # -- optimizing -------------------------------------------------------------------------------------
    rounds: int = _option(3, "at most this many rounds of profile, rewrite, verify")
    rewriter: str | None = _option(
        None, "rewriter: search (built-in) or llm; default llm when a model is configured, else search"
    )
    model: str | None = _option(None, "LLM model name for --rewriter llm", env="KERNEL_LAB_MODEL")
    base_url: str | None = _option(None, "OpenAI-compatible server (default https://api.openai.com/v1)", env="OPENAI_BASE_URL")
    llm_workers: int = _option(3, "LLM workers per round: conversations started from different directions, run at once")
    llm_turns: int = _option(4, "turns per LLM worker per round: an answer, the judge's verdict and its profile, the next answer")
    llm_requests: int | None = _option(None, "stop asking the model after this many requests")
    llm_tokens: int | None = _option(None, "stop asking the model after this many tokens (prompt and completion, by the server)")
    llm_cost: float | None = _option(None, "stop asking the model after this many dollars (needs price_in and price_out)")
    llm_seconds: float | None = _option(None, "stop asking the model after this many seconds of the LLM rewriter")
    price_in: float | None = _option(None, "the model's price in dollars per million input tokens (unknown: tokens only)")
    price_out: float | None = _option(None, "the model's price in dollars per million output tokens")
    llm_max_tokens: int | None = _option(None, "the most tokens an answer may have (default: the server's limit)")
    reasoning: bool | None = _option(
        None, "the model reasons (no temperature, max_completion_tokens); default: by its name (o1, o3, o4, gpt-5)"
    )
    candidates: int = _option(4, "candidates verified per round")
    screen: int = _option(
        64, "launch configurations measured quickly per round before the fastest are verified (0: verify each in full)"
    )
    screen_budget: float = _option(90.0, "seconds of quick measurements per round at most")
    time_budget: float | None = _option(None, "stop starting new rounds after this many seconds")
    seeds: int = _option(3, "fresh random input sets per shape when checking a candidate")
    rtol: float | None = _option(None, "relative tolerance (default: by dtype)")
    atol: float | None = _option(None, "absolute tolerance (default: by dtype)")
    verify_timeout: float = _option(300.0, "seconds the judge may spend on one candidate")
    root: str = _option(".kernel_lab", "where optimize sessions are kept")

    @classmethod
    def resolve(
        cls,
        explicit: Mapping[str, Any] | None = None,
        config: Mapping[str, Any] | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> Settings:
        """Settings from explicit values > ``config`` (%config) > ``environ`` > defaults; None means "not given"."""
        explicit, config = dict(explicit or {}), dict(config or {})
        environ = os.environ if environ is None else environ
        unknown = sorted(set(explicit) - {f.name for f in fields(cls)})
        if unknown:
            raise KernelLabError(f"Unknown setting(s): {', '.join(unknown)}.", fix=f"Settings are: {', '.join(names())}.")
        values: dict[str, Any] = {}
        for f in fields(cls):
            env = f.metadata["env"] or f"KERNEL_LAB_{f.name.upper()}"
            for given in (explicit.get(f.name), config.get(f.name), _parse(f, environ.get(env), env)):
                if given is not None:
                    values[f.name] = given
                    break
        return cls(**values)

    def but(self, **changes: Any) -> Settings:
        """A copy with some fields changed."""
        return replace(self, **changes)

    @property
    def kernel_filter(self) -> str | None:
        """The kernel regex to profile: ".*" for all kernels, else ``kernels`` (None: the cell's own)."""
        return ".*" if self.all_kernels else self.kernels

    @property
    def rewriter_name(self) -> str:
        """The rewriter to use: the one asked for, else "llm" when a model is configured, else "search"."""
        return self.rewriter or ("llm" if self.model else "search")


def names() -> list[str]:
    return [f.name for f in fields(Settings)]


def describe() -> list[tuple[str, Any, str, str | None]]:
    """(name, default, help, environment variable) of every setting, for documentation and ``%config``."""
    return [
        (
            f.name,
            f.default if f.default is not MISSING else None,
            f.metadata["help"],
            f.metadata["env"] or f"KERNEL_LAB_{f.name.upper()}",
        )
        for f in fields(Settings)
    ]


def _parse(f: Any, raw: str | None, env: str) -> Any:
    """An environment variable's text as the field's type (None when unset or empty)."""
    if raw is None or raw == "":
        return None
    kind = str(f.type)
    try:
        if kind.startswith("bool"):
            return raw.strip().lower() in ("1", "true", "yes", "on")
        if kind.startswith("int"):
            return int(raw)
        if kind.startswith("float"):
            return float(raw)
        if kind.startswith("tuple"):
            return tuple(s.strip() for s in raw.split(",") if s.strip())
    except ValueError:
        raise KernelLabError(
            f"${env} is {raw!r}, which is not a valid {kind.split(' ')[0]}.", fix=f"Fix or unset {env}."
        ) from None
    return raw
