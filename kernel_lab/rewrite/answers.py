"""Read a model's answer: the cell in its fenced code block, and the explanation around it."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from kernel_lab.errors import KernelLabError
from kernel_lab.models import KINDS
from kernel_lab.rewrite.base import Candidate

_OPEN = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*(?P<lang>[^\s`]*)[^`]*$")
_RUN = re.compile(r"^def\s+run\s*\(", re.M)
_THINK = re.compile(r"<think>.*?</think>", re.S)  # reasoning models (e.g. served by vLLM, Ollama)
_PYTHON = frozenset({"", "python", "py", "python3"})


class AnswerError(KernelLabError):
    """The model's answer holds no usable cell: only prose, or code cut off."""


@dataclass(frozen=True)
class _Block:
    code: str
    lang: str
    start: int  # line of the opening fence
    end: int  # line after the closing fence (or after the last line)
    closed: bool


def _compiles(code: str) -> bool:
    if not code.strip():
        return False
    try:
        compile(code, "<answer>", "exec")
    except (SyntaxError, ValueError):
        return False
    return True


def _blocks(lines: Sequence[str]) -> list[_Block]:
    """The fenced blocks in order; the last may be unterminated (a truncated answer)."""
    blocks: list[_Block] = []
    i = 0
    while i < len(lines):
        opening = _OPEN.match(lines[i])
        if not opening:
            i += 1
            continue
        fence, indent = opening["fence"], len(opening["indent"])
        closing = re.compile(rf"^[ \t]*{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$")
        j = i + 1
        while j < len(lines) and not closing.match(lines[j]):
            j += 1
        body = [line[min(indent, len(line) - len(line.lstrip(" \t"))) :] for line in lines[i + 1 : j]]
        code = "\n".join(body).strip("\n")
        blocks.append(_Block(code + "\n" if code else "", opening["lang"].lower(), i, min(j + 1, len(lines)), j < len(lines)))
        i = j + 1
    return blocks


def split_answer(text: str) -> tuple[str, str]:
    """(the cell's code, the explanation) of an answer; raises AnswerError when there is no usable code.

    Of several blocks the one defining ``run`` wins, then Python ones, then the longest. A block cut
    off at the end of the answer counts only if it compiles.
    """
    text = _THINK.sub("", text)
    lines = text.splitlines()
    found = _blocks(lines)
    cut = found[-1] if found and not found[-1].closed and not _compiles(found[-1].code) else None
    usable = [b for b in found if b is not cut and b.code.strip()]
    if not found and _compiles(text) and _RUN.search(text):  # bare code, no fence
        return text.strip() + "\n", ""
    best = max(usable, key=lambda b: (bool(_RUN.search(b.code)), b.lang in _PYTHON, len(b.code)), default=None)
    if cut is not None and (best is None or not _RUN.search(best.code)):
        raise AnswerError(
            "The answer's code is incomplete: the model's answer ends inside a code block that does not compile.",
            fix="Raise the server's output token limit (max_tokens, context size) or ask again.",
        )
    if best is None:
        raise AnswerError(
            "No code in the model's answer (it answered only prose).",
            fix="Ask again, or use a model that follows the format: one ```python block with the whole cell.",
        )
    explanation = "\n".join([*lines[: best.start], *lines[best.end :]])
    return best.code, re.sub(r"\n{3,}", "\n\n", explanation).strip()


def named_kind(explanation: str, kinds: Sequence[str]) -> str:
    """The bottleneck kind the explanation names first (``memory_bound`` or "memory bound"), else ``kinds[0]``."""
    first: tuple[int, str] | None = None
    for kind in dict.fromkeys([*kinds, *KINDS]):
        words = r"[_ -]".join(map(re.escape, kind.split("_")))
        match = re.search(rf"\b{words}\b", explanation, re.I)
        if match and (first is None or match.start() < first[0]):
            first = (match.start(), kind)
    return first[1] if first else (kinds[0] if kinds else "")


def parse_answer(text: str, kinds: Sequence[str], origin: str) -> Candidate:
    """The candidate in a model's answer; ``kinds`` are the context's bottleneck kinds, best first."""
    code, explanation = split_answer(text)
    return Candidate(source=code, explanation=explanation, answers=named_kind(explanation, kinds), origin=origin)
