"""The whole diagnosis as one standalone HTML page (plotly inline): ``kernel-lab diagnose --html``."""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING

from kernel_lab.display import html, metrics, rules, source
from kernel_lab.display.roofline import figure

if TYPE_CHECKING:
    from kernel_lab.results.profile import Result


def roofline_figure(result: Result):
    """The plotly roofline of a result, hover text naming each kernel's top bottleneck."""
    top = {(d.kernel.name, d.kernel.index): d.bottlenecks[0].kind for d in result.diagnoses if d.bottlenecks}
    return figure(list(result.rooflines), top=top)


def roofline_html(result: Result, include_plotlyjs: bool | str = True) -> str:
    return roofline_figure(result).to_html(full_html=False, include_plotlyjs=include_plotlyjs, div_id="kernel-lab-roofline")


def where_they_stand(result: Result) -> str:
    """One line per kernel saying where it stands on the roofline, for views where the chart may not draw."""
    items = "".join(f"<li>{escape(r.kernel)} (launch {r.launch}): {escape(r.label())}</li>" for r in result.rooflines)
    return f"<ul class='caption'>{items}</ul>" if items else ""


def per_kernel(result: Result, render) -> str:
    """``render(kernel)`` for every kernel of the result, each under its name."""
    return "".join(f"<h4>{escape(k.name)} (launch {k.index})</h4>{render(k)}" for k in result.profile.kernels)


def sections(result: Result, include_plotlyjs: bool | str = True) -> dict[str, str]:
    """The dashboard's tabs as HTML fragments: Summary, Roofline, Metrics, Source, Raw rules."""
    return {
        "Summary": html.render(result),
        "Roofline": roofline_html(result, include_plotlyjs),
        "Metrics": metrics.render(metrics.table(result.df)),
        "Source": source.STYLE + per_kernel(result, source.render),
        "Raw rules": per_kernel(result, rules.render),
    }


def fragment(result: Result, include_plotlyjs: bool | str = "cdn") -> str:
    """The dashboard as static HTML for notebooks viewed without widgets (Metrics left to result.df)."""
    parts = sections(result, include_plotlyjs)
    parts["Metrics"] = f"<p>{len(result.df)} metric values: see <code>result.df</code>.</p>"
    parts["Roofline"] = (
        f"<div class='kl'>{where_they_stand(result)}<p class='caption'>The chart below is drawn by plotly.js from "
        f"cdn.plot.ly; offline, only the lines above show.</p></div>{parts['Roofline']}"
    )
    return "".join(
        f"<details{' open' if name == 'Summary' else ''}><summary><b>{escape(name)}</b></summary>{content}</details>"
        for name, content in parts.items()
    )


def page(result: Result) -> str:
    """A complete HTML document that needs no Jupyter and no network."""
    body = "".join(
        f"<details{' open' if name in ('Summary', 'Roofline') else ''}><summary><h3 style='display:inline'>{escape(name)}</h3></summary>{content}</details>"
        for name, content in sections(result).items()
    )
    return (
        "<!DOCTYPE html><html><head><meta charset='utf-8'><title>Kernel Lab diagnosis</title></head>"
        f"<body><div class='kl'>{body}</div></body></html>"
    )
