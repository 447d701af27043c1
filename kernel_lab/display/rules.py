"""Nsight Compute's own rule messages, as it printed them."""

from __future__ import annotations

from html import escape

from kernel_lab.models import Kernel


def render(kernel: Kernel) -> str:
    """HTML table of the kernel's rule results: severity, rule, title, message, estimated speedup."""
    if not kernel.rules:
        return "<p>No rule results in this report.</p>"
    rows = "".join(
        f"<tr><td>{r.severity}</td><td>{escape(r.rule)}</td><td>{escape(r.title)}</td><td>{escape(r.message)}</td>"
        f"<td style='text-align: right'>{'' if r.speedup_pct is None else f'{r.speedup_pct:.1f}% ({r.speedup_scope})'}</td></tr>"
        for r in sorted(kernel.rules, key=lambda r: (r.severity != "OPT", -(r.speedup_pct or 0)))
    )
    return (
        "<div class='kl'><table class='text'><tr><th>type</th><th>rule</th><th>title</th><th>message</th>"
        f"<th style='text-align: right'>est. speedup</th></tr>{rows}</table></div>"
    )
