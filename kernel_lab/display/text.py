"""Plain-text rendering of a :class:`~kernel_lab.result.Result` for terminals."""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING

from kernel_lab.display.words import banner, kernel_facts, kernel_line, source_ref, verdict_lines

if TYPE_CHECKING:
    from kernel_lab.results.profile import Result

WIDTH = 100


def render(result: Result) -> str:
    out = [banner(result.profile)]
    out += [f"! {note}" for note in result.profile.notes]
    for d in result.diagnoses:
        k = d.kernel
        out += ["", kernel_line(k), "  " + " · ".join(kernel_facts(k))]
        out += [line for v in verdict_lines(d) for line in textwrap.wrap(v, WIDTH, initial_indent="  ", subsequent_indent="  ")]
        if not d.bottlenecks:
            out.append("  No significant bottleneck found in the collected metrics.")
        for rank, b in enumerate(d.bottlenecks, 1):
            out.append(f"  {rank}. [{b.kind}] {b.summary}  (score {b.score:.2f})")
            out += textwrap.wrap(b.hint, WIDTH, initial_indent="     ", subsequent_indent="     ")
            out += [f"     at {source_ref(s)}" for s in b.source_lines]
            out += [
                f"     Nsight Compute {r.rule}: {r.title or textwrap.shorten(r.message, 100, placeholder=' …')}"
                + (f" (est. speedup {r.speedup_pct:.0f}%)" if r.speedup_pct is not None else "")
                for r in b.ncu_rules
            ]
        if d.not_evaluated:
            out.append("  Not evaluated (metrics not collected): " + ", ".join(sorted(d.not_evaluated)))
    return "\n".join(out)
