"""The roofline chart (plotly): kernels against their memory and compute ceilings."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from kernel_lab.analysis.roofline import LEVELS, KernelRoofline

if TYPE_CHECKING:
    import plotly.graph_objects as go

TERA = 1e12
PLOT_PX = (700.0, 330.0)  # the plot area's size, roughly, for keeping labels apart
CHAR_PX, LINE_PX = 6.5, 15.0
PLACES = ("top center", "bottom center", "middle right", "middle left")
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
    ys = [r.flop_rate / TERA for r in rooflines if r.flop_rate > 0] + [c.value / TERA for c in compute.values()]
    y_range = (min(ys, default=1) / 10, max(ys, default=1) * 10)
    for level in LEVELS:
        placed = [(r, x) for r in rooflines if r.flop_rate > 0 and (x := r.intensity(level))]
        if not placed:
            continue
        symbol, color = LEVEL_STYLE[level]
        labels = [f"{r.kernel}<br>{r.label(level)}" for r, _ in placed] if level == "DRAM" else []  # DRAM points named
        places = _label_places([(x, r.flop_rate / TERA) for r, x in placed], labels, (x0, x1), y_range) if labels else []
        fig.add_trace(
            go.Scatter(
                x=[x for _, x in placed],
                y=[r.flop_rate / TERA for r, _ in placed],
                mode="markers+text" if labels else "markers",
                text=[label if place else "" for label, place in zip(labels, places, strict=True)] or None,
                textposition=[place or "top center" for place in places] or None,
                name=f"kernels ({level} intensity)",
                marker={"symbol": symbol, "size": 12, "color": color, "line": {"width": 1, "color": "black"}},
                hovertext=[
                    f"<b>{r.kernel}</b><br>{r.precision}: {r.flop_rate / TERA:.3g} TFLOP/s<br>"
                    f"{level}: {x:.3g} FLOP/byte, {r.byte_rates[level] / TERA:.3g} TB/s<br>"
                    f"{r.label(level)}<br>top bottleneck: {top.get((r.kernel, r.launch), 'none')}"
                    for r, x in placed
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
    fig.update_layout(
        title=title,
        xaxis={"type": "log", "title": "arithmetic intensity (FLOP / byte)"},
        yaxis={
            "type": "log",
            "title": "performance (TFLOP/s)",
            "range": [_log(y_range[0]), _log(y_range[1])],
        },
        template="plotly_white",
        height=480 + 18 * len(unplaced),
        margin={"b": 90 + 18 * len(unplaced)},
        legend={"font": {"size": 10}},
    )
    return fig


def _label_places(
    points: list[tuple[float, float]], labels: list[str], x_range: tuple[float, float], y_range: tuple[float, float]
) -> list[str | None]:
    """Where each point's label goes so that no two labels overlap: above, below, right or left of the point,
    or nowhere (its hover text still says it). Greedy, in the order given; sizes in the plot's pixels, roughly."""
    sx = PLOT_PX[0] / (_log(x_range[1]) - _log(x_range[0]))
    sy = PLOT_PX[1] / (_log(y_range[1]) - _log(y_range[0]))
    taken: list[tuple[float, float, float, float]] = []
    out: list[str | None] = []
    for (x, y), label in zip(points, labels, strict=True):
        lines = label.split("<br>")
        w, h = CHAR_PX * max(map(len, lines)), LINE_PX * len(lines)
        px, py = _log(x) * sx, _log(y) * sy
        boxes = {
            "top center": (px - w / 2, py + 8, px + w / 2, py + 8 + h),
            "bottom center": (px - w / 2, py - 8 - h, px + w / 2, py - 8),
            "middle right": (px + 10, py - h / 2, px + 10 + w, py + h / 2),
            "middle left": (px - 10 - w, py - h / 2, px - 10, py + h / 2),
        }
        place = next((p for p in PLACES if not any(_overlap(boxes[p], t) for t in taken)), None)
        if place:
            taken.append(boxes[place])
        out.append(place)
    return out


def _overlap(a: tuple[float, float, float, float], b: tuple[float, float, float, float]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


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
