"""Map per-line counters back to the user's source lines."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from kernel_lab.models import Kernel, SourceLine


@lru_cache(maxsize=64)
def file_lines(path: str) -> tuple[str, ...]:
    try:
        return tuple(Path(path).read_text(errors="replace").splitlines())
    except OSError:
        return ()


def line_text(kernel: Kernel, file: str, line: int) -> str:
    """The text of ``file:line`` from the report's imported source, else from disk, else ''."""
    content = kernel.source_files.get(file)
    lines = tuple(content.splitlines()) if content is not None else file_lines(file)
    return lines[line - 1].strip() if 0 < line <= len(lines) else ""


def top_lines(kernel: Kernel, counter: str, *, n: int = 3, min_share: float = 0.05) -> tuple[SourceLine, ...]:
    """The ``n`` lines holding the largest share of ``counter`` (a key of ``Kernel.line_counters``)."""
    per_line = kernel.line_counters.get(counter, {})
    total = sum(per_line.values())
    if total <= 0:
        return ()
    ranked = sorted(per_line.items(), key=lambda item: -item[1])[:n]
    return tuple(
        SourceLine(file=f, line=ln, share=v / total, text=line_text(kernel, f, ln))
        for (f, ln), v in ranked
        if v / total >= min_share
    )
