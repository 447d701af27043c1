"""Before/after view: speedup, the metrics that changed most, bottlenecks gone and new, roofline arrows."""

from __future__ import annotations

import math
from html import escape

from kernel_lab.analysis.compare import Comparison
from kernel_lab.analysis.roofline import roofline
from kernel_lab.display.html import STYLE
from kernel_lab.display.roofline import figure


def _change(value: float) -> str:
    return "new" if math.isinf(value) else f"{value:+.0%}"


def text(c: Comparison) -> str:
    lines = [f"{c.before.kernel.name} → {c.after.kernel.name}"]
    if c.speedup:
        lines.append(f"  speedup {c.speedup:.2f}x (duration before / after)")
    lines += [f"  {m.label}: {m.before:,.4g} → {m.after:,.4g} ({_change(m.change)})" for m in c.changes]
    lines.append("  bottlenecks gone: " + (", ".join(c.disappeared) or "none"))
    lines.append("  bottlenecks new:  " + (", ".join(c.appeared) or "none"))
    return "\n".join(lines)


def chart(c: Comparison):
    old, new = roofline(c.before.kernel), roofline(c.after.kernel)
    new = type(new)(**{**new.__dict__, "kernel": new.kernel + " (after)"})
    return figure([old, new], arrows=[(old, new)], title="Before → after")


def html(c: Comparison, include_plotlyjs: bool | str = "cdn") -> str:
    rows = "".join(
        f"<tr><td>{escape(m.label)}</td><td>{m.before:,.4g}</td><td>{m.after:,.4g}</td><td>{_change(m.change)}</td></tr>"
        for m in c.changes
    )
    speed = f"<p><b>Speedup {c.speedup:.2f}×</b> (duration before / after)</p>" if c.speedup else ""
    kinds = lambda ks: ", ".join(f"<span class='kind'>{escape(k)}</span>" for k in ks) or "none"  # noqa: E731
    return (
        f"{STYLE}<div class='kl'><h3>{escape(c.before.kernel.name)} → {escape(c.after.kernel.name)}</h3>{speed}"
        f"<p>Bottlenecks gone: {kinds(c.disappeared)}<br>Bottlenecks new: {kinds(c.appeared)}</p>"
        f"<table><tr><th>metric</th><th>before</th><th>after</th><th>change</th></tr>{rows}</table>"
        f"{chart(c).to_html(full_html=False, include_plotlyjs=include_plotlyjs)}</div>"
    )
