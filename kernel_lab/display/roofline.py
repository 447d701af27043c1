"""The roofline chart (plotly): kernels against their memory and compute ceilings."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from kernel_lab.analysis.roofline import LEVELS, KernelRoofline

if TYPE_CHECKING:
    import plotly.graph_objects as go

TERA = 1e12
LEVEL_STYLE = {"DRAM": ("circle", "#d62728"), "L2": ("diamond", "#2ca02c"), "L1": ("square", "#1f77b4")}
COMPUTE_COLOR = "#555"


def _x_range(points: list[KernelRoofline], memory: dict, compute: dict) -> tuple[float, float]:
    xs = [r.intensity(level) for r in points for level in LEVELS if r.intensity(level)]
    ridges = [c.value / m.value for c in compute.values() for m in memory.values()]
    values = [x for x in xs + ridges if x and x > 0] or [1.0]
    return min(values) / 4, max(values) * 4


def figure(
    rooflines: list[KernelRoofline],
    *,
    top: dict[tuple[str, int], str] | None = None,
    arrows: Sequence[tuple[KernelRoofline, KernelRoofline]] = (),
    title: str = "Roofline",
) -> go.Figure:
    """Hierarchical roofline: one marker per kernel and memory level; ``top`` maps (kernel, launch)
    to its top bottleneck for the hover text; ``arrows`` go from old to new points (DRAM level)."""
    import plotly.graph_objects as go

    top = top or {}
    memory = _highest(c for r in rooflines for c in r.memory.values())
    precisions = {r.precision for r in rooflines if r.precision} or {"FP32"}
    compute = _highest(c for r in rooflines for c in r.compute.values() if c.name in precisions)
    x0, x1 = _x_range(rooflines, memory, compute)
    fig = go.Figure()
    peak = max((c.value for c in compute.values()), default=None)
    for level, roof in memory.items():
        ridge = peak / roof.value if peak else x1
        xs = [x0, min(ridge, x1)]
        fig.add_trace(
            go.Scatter(
                x=xs,
                y=[x * roof.value / TERA for x in xs],
                mode="lines",
                name=f"{level} {roof.value / TERA:.1f} TB/s",
                line={"color": LEVEL_STYLE[level][1], "width": 2},
                hoverinfo="name",
                legendgroup="roofs",
            )
        )
    for name, roof in compute.items():
        fig.add_trace(
            go.Scatter(
                x=[x0, x1],
                y=[roof.value / TERA] * 2,
                mode="lines",
                name=f"{name} {roof.value / TERA:.0f} TFLOP/s",
                line={"color": COMPUTE_COLOR, "dash": "dash"},
                hoverinfo="name",
                legendgroup="roofs",
            )
        )
    for level in LEVELS:
        placed = [r for r in rooflines if r.flop_rate > 0 and r.intensity(level)]
        if not placed:
            continue
        symbol, color = LEVEL_STYLE[level]
        fig.add_trace(
            go.Scatter(
                x=[r.intensity(level) for r in placed],
                y=[r.flop_rate / TERA for r in placed],
                mode="markers+text" if level == "DRAM" else "markers",
                text=[f"{r.kernel}<br>{r.label(level)}" for r in placed] if level == "DRAM" else None,
                textposition="top center",
                name=f"kernels ({level} intensity)",
                marker={"symbol": symbol, "size": 12, "color": color, "line": {"width": 1, "color": "black"}},
                hovertext=[
                    f"<b>{r.kernel}</b><br>{r.precision}: {r.flop_rate / TERA:.3g} TFLOP/s<br>"
                    f"{level}: {r.intensity(level):.3g} FLOP/byte, {r.byte_rates[level] / TERA:.3g} TB/s<br>"
                    f"{r.label(level)}<br>top bottleneck: {top.get((r.kernel, r.launch), 'none')}"
                    for r in placed
                ],
                hoverinfo="text",
            )
        )
    for old, new in arrows:
        old_ai, new_ai = old.intensity(), new.intensity()
        if old_ai and new_ai and old.flop_rate and new.flop_rate:
            fig.add_annotation(
                x=_log(new_ai),
                y=_log(new.flop_rate / TERA),
                ax=_log(old_ai),
                ay=_log(old.flop_rate / TERA),
                xref="x",
                yref="y",
                axref="x",
                ayref="y",
                showarrow=True,
                arrowhead=3,
                arrowwidth=2,
                arrowcolor="#444",
            )
    unplaced = [f"{r.kernel}: {r.label()}" for r in rooflines if r.flop_rate <= 0]
    if unplaced:
        fig.add_annotation(
            text="<br>".join(unplaced), xref="paper", yref="paper", x=0, y=-0.18, yanchor="top", showarrow=False, align="left"
        )
    ys = [r.flop_rate / TERA for r in rooflines if r.flop_rate > 0] + [c.value / TERA for c in compute.values()]
    fig.update_layout(
        title=title,
        xaxis={"type": "log", "title": "arithmetic intensity (FLOP / byte)"},
        yaxis={
            "type": "log",
            "title": "performance (TFLOP/s)",
            "range": [_log(min(ys, default=1) / 10), _log(max(ys, default=1) * 10)],
        },
        template="plotly_white",
        height=480 + 18 * len(unplaced),
        margin={"b": 90 + 18 * len(unplaced)},
        legend={"font": {"size": 10}},
    )
    return fig


def _highest(ceilings) -> dict:
    """One ceiling per name: the highest seen (reports taken at different clocks differ slightly)."""
    out: dict = {}
    for c in ceilings:
        if c.name not in out or c.value > out[c.name].value:
            out[c.name] = c
    return out


def _log(v: float) -> float:
    import math

    return math.log10(v)
