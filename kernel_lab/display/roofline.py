"""The roofline chart (plotly): kernels against their memory and compute ceilings."""

from __future__ import annotations

import math
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
#: memory levels of the bandwidth view, far to near, with the name shown under each bar group
BANDWIDTH_LEVELS = {"DRAM": "DRAM (device memory)", "L2": "L2 cache", "L1": "L1 cache / shared memory"}


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
    to its top bottleneck for the hover text; ``arrows`` go from old to new points (DRAM level).
    Kernels without floating-point work are drawn as bars of each memory level's bandwidth instead
    (under the roofline when some kernels have FLOPs), so every kernel with memory metrics is shown."""
    from plotly.subplots import make_subplots

    flops = [r for r in rooflines if r.flop_rate > 0]
    bandwidth = [r for r in rooflines if r.flop_rate <= 0 and any(r.byte_rates.get(level) for level in r.memory)]
    unplaced = [f"{r.kernel}: {r.label()}" for r in rooflines if r.flop_rate <= 0 and r not in bandwidth]
    both = bool(flops and bandwidth)
    fig = make_subplots(rows=2 if both else 1, cols=1, row_heights=[0.62, 0.38] if both else None, vertical_spacing=0.16)
    if flops or not bandwidth:
        _roofline(fig, flops or rooflines, top or {}, arrows)
    if bandwidth:
        _bandwidth(fig, bandwidth, row=2 if both else 1, alone=not flops)
    if unplaced:
        fig.add_annotation(
            text="<br>".join(unplaced), xref="paper", yref="paper", x=0, y=-0.18, yanchor="top", showarrow=False, align="left"
        )
    fig.update_layout(
        title=title if flops or not bandwidth else f"{title}: no floating-point work, so bandwidth against each level's roof",
        template="plotly_white",
        height=(820 if both else 480) + 18 * len(unplaced),
        margin={"b": 90 + 18 * len(unplaced)},
        legend={"font": {"size": 10}},
        barmode="group",
    )
    return fig


def _roofline(
    fig: go.Figure,
    rooflines: list[KernelRoofline],
    top: dict[tuple[str, int], str],
    arrows: Sequence[tuple[KernelRoofline, KernelRoofline]],
) -> None:
    """The roofs and the kernels with floating-point work, in the figure's first row."""
    import plotly.graph_objects as go

    memory = _highest(c for r in rooflines for c in r.memory.values())
    precisions = {r.precision for r in rooflines if r.precision} or {"FP32"}
    compute = _highest(c for r in rooflines for c in r.compute.values() if c.name in precisions)
    x0, x1 = _x_range(rooflines, memory, compute)
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
            ),
            row=1,
            col=1,
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
            ),
            row=1,
            col=1,
        )
    ys = [r.flop_rate / TERA for r in rooflines if r.flop_rate > 0] + [c.value / TERA for c in compute.values()]
    y_range = (min(ys, default=1) / 10, max(ys, default=1) * 10)
    roofs = [c.value / TERA for c in compute.values()]
    for level in LEVELS:
        placed = [(r, x) for r in rooflines if r.flop_rate > 0 and (x := r.intensity(level))]
        if not placed:
            continue
        symbol, color = LEVEL_STYLE[level]
        labels = [f"{r.kernel}<br>{r.label(level)}" for r, _ in placed] if level == "DRAM" else []  # DRAM points named
        points = [(x, r.flop_rate / TERA) for r, x in placed]
        places = _label_places(points, labels, (x0, x1), y_range, roofs=roofs) if labels else []
        fig.add_trace(
            go.Scatter(
                x=[x for _, x in placed],
                y=[r.flop_rate / TERA for r, _ in placed],
                mode="markers+text" if labels else "markers",
                text=[label if place else "" for label, place in zip(labels, places, strict=True)] or None,
                textposition=[place or "top center" for place in places] or None,
                cliponaxis=False,
                name=f"kernels ({level} intensity)",
                marker={"symbol": symbol, "size": 12, "color": color, "line": {"width": 1, "color": "black"}},
                hovertext=[
                    f"<b>{r.kernel}</b><br>{r.precision}: {r.flop_rate / TERA:.3g} TFLOP/s<br>"
                    f"{level}: {x:.3g} FLOP/byte, {r.byte_rates[level] / TERA:.3g} TB/s<br>"
                    f"{r.label(level)}<br>top bottleneck: {top.get((r.kernel, r.launch), 'none')}"
                    for r, x in placed
                ],
                hoverinfo="text",
            ),
            row=1,
            col=1,
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
    fig.update_xaxes(_decades(x0, x1), title="arithmetic intensity (FLOP / byte)", row=1, col=1)
    fig.update_yaxes(_decades(*y_range), title="performance (TFLOP/s)", row=1, col=1)


def _bandwidth(fig: go.Figure, rooflines: list[KernelRoofline], *, row: int, alone: bool) -> None:
    """Kernels without floating-point work: per memory level, the achieved bandwidth as a bar in % of that
    level's roof (its peak bandwidth), labelled with the share and the bytes per second."""
    import plotly.graph_objects as go

    top_pct = 100.0
    for r in rooflines:
        levels = [level for level in BANDWIDTH_LEVELS if r.byte_rates.get(level) and level in r.memory]
        pcts = [100 * r.byte_rates[level] / r.memory[level].value for level in levels]
        top_pct = max(top_pct, *pcts)
        fig.add_trace(
            go.Bar(
                x=[BANDWIDTH_LEVELS[level] for level in levels],
                y=pcts,
                name=r.kernel,
                showlegend=True,
                text=[
                    f"{p:.0f}%<br>{r.byte_rates[level] / TERA:.2f} of {r.memory[level].value / TERA:.1f} TB/s"
                    + (f"<br>unit busy {busy:.0f}%" if (busy := _busier(r, level, p)) else "")
                    for level, p in zip(levels, pcts, strict=True)
                ],
                textposition="outside",
                textfont={"size": 11},
                cliponaxis=False,
                hovertext=[
                    f"<b>{r.kernel}</b><br>{level}: {r.label(level)}{_busy_hover(r, level, p)}"
                    for level, p in zip(levels, pcts, strict=True)
                ],
                hoverinfo="text",
            ),
            row=row,
            col=1,
        )
    fig.add_hline(
        y=100,
        line={"color": COMPUTE_COLOR, "dash": "dash"},
        annotation_text="roof: each level's peak bandwidth",
        annotation_position="top left",
        row=row,
        col=1,
    )
    if not alone:
        fig.add_annotation(
            text="<b>Kernels without floating-point work</b>: bandwidth of each memory level against its roof",
            xref=f"x{row} domain",
            yref=f"y{row} domain",
            x=0,
            y=1.12,
            xanchor="left",
            showarrow=False,
        )
    fig.update_yaxes(title="% of peak bandwidth", range=[0, top_pct * 1.25], ticksuffix="%", row=row, col=1)
    fig.update_xaxes(title="memory level", row=row, col=1)


BUSIER = 15.0  # points by which Nsight Compute's unit throughput must exceed the bytes' share to be shown


def _busier(r: KernelRoofline, level: str, pct: float) -> float | None:
    """Nsight Compute's throughput of the level's unit when well above the bytes moved (``pct`` of peak), else None:
    what the summary calls the busiest unit, so the two views do not seem to disagree."""
    busy = r.busy.get(level)
    return busy if busy is not None and busy - pct >= BUSIER else None


def _busy_hover(r: KernelRoofline, level: str, pct: float) -> str:
    busy = _busier(r, level, pct)
    if busy is None:
        return ""
    return (
        f"<br>Nsight Compute's {level} throughput is {busy:.0f}%: it counts the unit's busiest part"
        f"<br>(e.g. tag lookups, which scattered access multiplies), not only bytes moved"
    )


def _decades(lo: float, hi: float) -> dict:
    """A log axis from ``lo`` to ``hi`` labelled at powers of ten (1, 10, 100, ...), and at 2 and 5 times them
    when it spans fewer than three decades; no other (minor) labels."""
    steps = (1, 2, 5) if _log(hi) - _log(lo) < 3 else (1,)
    values = [m * 10.0**e for e in range(math.floor(_log(lo)), math.ceil(_log(hi)) + 1) for m in steps]
    values = [v for v in values if lo <= v <= hi]
    return {
        "type": "log",
        "range": [_log(lo), _log(hi)],
        "tickmode": "array",
        "tickvals": values,
        "ticktext": [f"{v:,.0f}" if v >= 1 else f"{v:g}" for v in values],
    }


def _label_places(
    points: list[tuple[float, float]],
    labels: list[str],
    x_range: tuple[float, float],
    y_range: tuple[float, float],
    *,
    roofs: Sequence[float] = (),
) -> list[str | None]:
    """Where each point's label goes so that no two labels overlap and no label crosses a horizontal (compute)
    roof at ``roofs``: above, below, right or left of the point, inside the plot where one of those fits, or
    nowhere (its hover text still says it). Greedy, in the order given; sizes in the plot's pixels, roughly."""
    sx = PLOT_PX[0] / (_log(x_range[1]) - _log(x_range[0]))
    sy = PLOT_PX[1] / (_log(y_range[1]) - _log(y_range[0]))
    lines = [(_log(y) - _log(y_range[0])) * sy for y in roofs]
    taken: list[tuple[float, float, float, float]] = []
    out: list[str | None] = []
    for (x, y), label in zip(points, labels, strict=True):
        rows = label.split("<br>")
        w, h = CHAR_PX * max(map(len, rows)), LINE_PX * len(rows)
        px, py = (_log(x) - _log(x_range[0])) * sx, (_log(y) - _log(y_range[0])) * sy
        boxes = {
            "top center": (px - w / 2, py + 8, px + w / 2, py + 8 + h),
            "bottom center": (px - w / 2, py - 8 - h, px + w / 2, py - 8),
            "middle right": (px + 10, py - h / 2, px + 10 + w, py + h / 2),
            "middle left": (px - 10 - w, py - h / 2, px - 10, py + h / 2),
        }
        free = [
            p
            for p in PLACES
            if not any(_overlap(boxes[p], t) for t in taken) and not any(boxes[p][1] < ln < boxes[p][3] for ln in lines)
        ]
        inside = [
            p for p in free if boxes[p][0] >= 0 and boxes[p][2] <= PLOT_PX[0] and boxes[p][1] >= 0 and boxes[p][3] <= PLOT_PX[1]
        ]
        place = next(iter(inside or free), None)
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
    return math.log10(v)
