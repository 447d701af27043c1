"""Plain-text rendering of a :class:`~kernel_lab.result.Result` for terminals, every line at most :data:`WIDTH`
columns, broken between words (a word longer than a line is left whole)."""

from __future__ import annotations

import textwrap
from collections.abc import Iterable
from typing import TYPE_CHECKING

from kernel_lab.display.words import banner, cell_lines, kernel_facts, kernel_line, roofline_line, source_ref, verdict_lines

if TYPE_CHECKING:
    from kernel_lab.models import Bottleneck, CellReading
    from kernel_lab.results.profile import Result

WIDTH = 100


def wrap(text: str, indent: str = "", more: str | None = None) -> list[str]:
    """``text`` in lines of at most :data:`WIDTH` columns, the first indented by ``indent``, the rest by ``more``
    (default: the same), broken at spaces only (not inside a word, nor at its hyphens)."""
    return textwrap.wrap(
        text,
        WIDTH,
        initial_indent=indent,
        subsequent_indent=indent if more is None else more,
        break_long_words=False,
        break_on_hyphens=False,
    ) or [indent.rstrip()]


def joined(parts: Iterable[str], indent: str) -> list[str]:
    """``parts`` joined by " · " in lines of at most :data:`WIDTH` columns, each line broken between parts."""
    lines: list[str] = []
    for part in parts:
        if lines and len(lines[-1]) + 3 + len(part) <= WIDTH:
            lines[-1] += " · " + part
        else:
            lines.append(indent + part)
    return lines


def _bottleneck(rank: int, b: Bottleneck) -> list[str]:
    out = wrap(f"{rank}. [{b.kind}] {b.summary}  (score {b.score:.2f})", "  ", "     ")
    out += wrap(b.hint, "     ")
    for s in b.source_lines:  # where, then the line itself: code is not broken where it fits
        where, _, code = source_ref(s).partition("  ")
        out += wrap(f"at {where}", "     ") + (wrap(code.strip(), "         ", "             ") if code else [])
    for r in b.ncu_rules:
        speedup = f" (est. speedup {r.speedup_pct:.0f}%)" if r.speedup_pct is not None else ""
        said = r.title or textwrap.shorten(r.message, 160, placeholder=" …")
        out += wrap(f"Nsight Compute {r.rule}: {said}{speedup}", "     ", "       ")
    return out


def _cell(r: CellReading) -> list[str]:
    """The whole cell above its kernels: the headline, the tensors its launches share, the gaps, its findings."""
    headline, *details = cell_lines(r)
    out = ["", *wrap(headline)]
    out += [line for d in details for line in wrap(d, "  ", "    ")]
    for rank, b in enumerate(r.findings, 1):
        out += _bottleneck(rank, b)
    return out


def render(result: Result) -> str:
    out = wrap(banner(result.profile))
    out += [line for note in result.profile.notes for line in wrap(f"! {note}", "", "  ")]
    if result.cell is not None:
        out += _cell(result.cell)
    for d in result.diagnoses:
        k = d.kernel
        out += ["", *wrap(kernel_line(k)), *joined(kernel_facts(k), "  "), *wrap(roofline_line(k), "  ")]
        out += [line for v in verdict_lines(d) for line in wrap(v, "  ")]
        if not d.bottlenecks:
            out.append("  No significant bottleneck found in the collected metrics.")
        for rank, b in enumerate(d.bottlenecks, 1):
            out += _bottleneck(rank, b)
        if d.not_evaluated:
            out += wrap("Not evaluated (metrics not collected): " + ", ".join(sorted(d.not_evaluated)), "  ", "    ")
    return "\n".join(out)
