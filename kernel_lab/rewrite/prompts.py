"""The messages sent to a chat model: the task, the cell, its ranked bottlenecks and what was tried."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import PurePath
from typing import Any

from kernel_lab.rewrite.base import Attempt, RewriteContext

RULES = """\
You optimize GPU kernels written in a Jupyter cell. The cell defines its kernels, make_inputs() \
which builds the inputs, and run(*inputs) which launches the kernels and returns the result.
Rewrite the whole cell so that run(*make_inputs()) is faster while computing the same function.
Rules:
- Keep make_inputs() as it is and keep the signature of run; run must return the same dtype and shape \
and the same values up to floating-point rounding. make_inputs, SHAPES and the functions run does not \
call are the user's harness: they are put back as the user wrote them before your cell is judged.
- Do the computation in the cell's own kernels, in the cell's language: no calls to library \
implementations of it (torch, cuBLAS, cuDNN, ...); torch may only allocate and reshape tensors.
- Fix the most costly bottleneck first, using its evidence and source lines.
- Do not repeat an earlier attempt that was wrong, did not compile or was not faster.
{language}
Answer with exactly one fenced ```python block that contains the whole cell (imports, kernels, \
make_inputs, run), then a short explanation (at most 4 sentences) of what you changed that names \
the bottleneck kind it addresses (for example uncoalesced_global)."""
#: what each language's kernels need, in the system prompt
LANGUAGE_RULES = {
    "triton": "- Triton: keep @triton.jit kernels launched from Python; block sizes are tl.constexpr powers of two; "
    "mask every load and store that may pass the data's end; accumulate reductions in float32.",
    "cuda": "- CUDA: keep the C++ source built with torch.utils.cpp_extension.load_inline and its Python binding; "
    "coalesce global accesses (consecutive threads, consecutive addresses), stage reused data in __shared__ memory, "
    "reduce within a warp (__shfl_down_sync) before any atomic.",
}
AGENT = """
You work in turns: after each answer you get the judge's verdict on it (a compile or Python error with the line \
numbers of the cell you sent; wrong values with where, by how much and on which input set; its time against the \
original's and the best so far; the judge's warnings) and, when it is correct, its own profile. Fix what the \
verdict names, or go on from the profile's new top bottleneck; answer every turn with the whole cell again."""


LAUNCH = """\
You tune the launch configurations of the Triton kernels of a Jupyter cell: block sizes (tl.constexpr), group sizes, \
num_warps and num_stages. You do not write code: each turn you answer with a JSON list of configurations to try; \
each is applied to the cell, measured, and the fastest is judged for correctness and speed. You then get the \
measured times and the judge's verdict, and answer with the next configurations to try, nearer the fastest."""


def system_prompt(language: str = "triton", agent: bool = False, launch: bool = False) -> str:
    """The system prompt for a cell in ``language``; ``agent``: the model works in turns with the judge's feedback;
    ``launch``: it proposes launch configurations only."""
    if launch:
        return LAUNCH
    return RULES.format(language=LANGUAGE_RULES.get(language, "")) + (AGENT if agent else "")


LANGUAGES = {
    "triton": "Triton (@triton.jit kernels launched from Python)",
    "cuda": "CUDA C++ built with torch.utils.cpp_extension.load_inline",
}
MAX_EXPLANATION = 300  # characters of an earlier attempt's explanation kept in the prompt


def build_messages(context: RewriteContext) -> list[dict[str, str]]:
    """The chat messages for ``context``: the system prompt and one user message."""
    return [{"role": "system", "content": system_prompt(context.language)}, {"role": "user", "content": user_message(context)}]


ASK = (
    "Rewrite the whole cell. Answer with one ```python block holding the whole cell, "
    "then a short explanation naming the bottleneck kind it addresses."
)


def user_message(context: RewriteContext, direction: str = "", ask: str = ASK) -> str:
    """Device, cell (with where ``run`` is), ranked bottlenecks, the whole cell's reading, where it stands on its roof,
    earlier attempts, and the ``direction`` to take; deterministic."""
    return "\n\n".join(
        part
        for part in [
            f"Device: {context.device}\nLanguage: {LANGUAGES.get(context.language, context.language)}",
            _cell(context.source),
            _bottlenecks(context.bottlenecks),
            context.cell,
            f"## The roof\nThe top kernel runs at {context.roof}." if context.roof else "",
            _history(context.history),
            direction,
            ask,
        ]
        if part
    )


def _line_of(source: str, name: str) -> int | None:
    """Line number (1-based) of the top-level ``def name(`` in ``source``."""
    match = re.search(rf"^def\s+{name}\s*\(", source, re.M)
    return source.count("\n", 0, match.start()) + 1 if match else None


def _cell(source: str) -> str:
    run, inputs = _line_of(source, "run"), _line_of(source, "make_inputs")
    where = [
        f"The launch code is in `run` (line {run})." if run else "The cell defines no `run`; it runs as a whole.",
        f"`make_inputs` (line {inputs}) builds the inputs." if inputs else "",
    ]
    fence = "`" * max(3, 1 + max((len(r) for r in re.findall(r"`+", source)), default=0))
    return f"## Current cell\n{' '.join(filter(None, where))}\n{fence}python\n{source.rstrip()}\n{fence}"


def _number(value: Any) -> str:
    """A metric value, short: integers whole, other numbers to 4 significant digits."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    if float(value).is_integer() and abs(value) < 1e15:
        return str(int(value))
    return f"{value:.4g}"


def bottleneck(rank: int, b: Mapping[str, Any]) -> str:
    lines = [f"{rank}. {b.get('kind', '?')} (score {_number(b.get('score', 0.0))}): {b.get('summary', '')}".rstrip()]
    if b.get("kernel"):
        lines.append(f"   kernel: {b['kernel']}")
    if b.get("limiter"):
        lines.append(f"   limiter: {b['limiter']}")
    if b.get("evidence"):
        lines.append("   evidence: " + "; ".join(f"{k}: {_number(v)}" for k, v in b["evidence"].items()))
    for s in b.get("source_lines", ()):
        where = f"{PurePath(str(s.get('file', ''))).name}:{s.get('line')}"
        lines.append(f"   source {where} ({float(s.get('share', 0)):.0%}): {str(s.get('text', '')).strip()}")
    for r in b.get("ncu_rules", ()):
        speedup = f", est. speedup {r['speedup_pct']:.0f}%" if r.get("speedup_pct") is not None else ""
        lines.append(f"   Nsight Compute rule {r.get('rule')}{speedup}")
    if b.get("hint"):
        lines.append(f"   hint: {b['hint']}")
    return "\n".join(lines)


def _bottlenecks(bottlenecks: Sequence[Mapping[str, Any]]) -> str:
    if not bottlenecks:
        return "## Bottlenecks\nNone found by the profiler; look for a faster formulation."
    ranked = "\n".join(bottleneck(i, b) for i, b in enumerate(bottlenecks, 1))
    return f"## Bottlenecks (ranked; score = share of the kernel's time it costs)\n{ranked}"


def _one_line(text: str, limit: int | None = None) -> str:
    flat = " ".join(text.split())
    return flat if limit is None or len(flat) <= limit else flat[: limit - 1] + "…"


def _history(history: Sequence[Attempt]) -> str:
    if not history:
        return "## Earlier attempts\nNone yet."
    tried = "\n".join(
        f"{i}. {_one_line(a.explanation, MAX_EXPLANATION) or '(no explanation)'} -> {_one_line(a.outcome)}"
        for i, a in enumerate(history, 1)
    )
    return f"## Earlier attempts (change -> outcome; do not repeat what failed or was not faster)\n{tried}"
