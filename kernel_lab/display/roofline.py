"""The roofline chart (plotly): kernels against their memory and compute ceilings."""

from __future__ import annotations

import math
import textwrap
from collections.abc import Sequence
from typing import TYPE_CHECKING

from kernel_lab.analysis.roofline import LEVELS, KernelRoofline, phrase

if TYPE_CHECKING:
    import plotly.graph_objects as go

TERA = 1e12
#: the plot area's size in pixels, roughly, in a laptop's notebook (legend below it), for keeping labels apart
PLOT_PX = (680.0, 290.0)
CHAR_PX, LINE_PX = 6.5, 15.0
LEGEND_ROW_PX = 20.0  # a row of the legend under the plot, about four entries wide
#: the legend under the plot, so that the plot has the notebook's whole width and no label goes under the legend
LEGEND = {"font": {"size": 10}, "orientation": "h", "x": 0, "xref": "container", "y": 0, "yref": "container", "yanchor": "bottom"}
MARKER_PX = 14.0  # a marker's box, which no label may cover
PLACES = ("top center", "bottom center", "middle right", "middle left")
LEVEL_STYLE = {"DRAM": ("circle", "#d62728"), "L2": ("diamond", "#2ca02c"), "L1": ("square", "#1f77b4")}
#: one colour per kernel, the same in both rows of a figure; none of them is a memory roof's colour
KERNEL_COLORS = ("#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f", "#393b79", "#843c39")
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
    """Hierarchical roofline: per kernel, one marker per memory level (its symbol) in the kernel's colour, named in
    the legend; ``top`` maps (kernel, launch) to its top bottleneck for the hover text; ``arrows`` go from old to
    new points (DRAM level). Kernels without floating-point work are drawn as bars of each memory level's bandwidth
    instead (under the roofline when some kernels have FLOPs), so every kernel with memory metrics is shown."""
    from plotly.subplots import make_subplots

    flops = [r for r in rooflines if r.flop_rate > 0]
    bandwidth = [r for r in rooflines if r.flop_rate <= 0 and any(r.byte_rates.get(level) for level in r.memory)]
    unplaced = [f"{r.kernel}: {r.label()}" for r in rooflines if r.flop_rate <= 0 and r not in bandwidth]
    both = bool(flops and bandwidth)
    styles = _styles(rooflines)
    fig = make_subplots(rows=2 if both else 1, cols=1, row_heights=[0.62, 0.38] if both else None, vertical_spacing=0.16)
    if flops or not bandwidth:
        _roofline(fig, flops or rooflines, styles, top or {}, arrows)
    if bandwidth:
        _bandwidth(fig, bandwidth, styles, row=2 if both else 1, alone=not flops)
    heading = title if flops or not bandwidth else f"{title}: no floating-point work, so bandwidth against each level's roof"
    fig.update_layout(  # kernels that cannot be placed say why under the title
        title="<br>".join([heading, *(f"<span style='font-size: 12px'>{u}</span>" for u in unplaced)]),
        template="plotly_white",
        height=(800 if both else 460) + LEGEND_ROW_PX * _legend_rows(fig) + 18 * len(unplaced),
        margin={"l": 70, "r": 30, "t": 60 + 18 * len(unplaced), "b": 40},
        legend=LEGEND,
        barmode="group",
    )
    return fig


def _legend_rows(fig: go.Figure) -> int:
    return math.ceil(sum(t.showlegend is not False for t in fig.data) / 4)


def _styles(rooflines: list[KernelRoofline]) -> dict[tuple[str, int], tuple[str, str]]:
    """(kernel, launch) -> (the name shown for it, its colour): a name that repeats says its launch."""
    names = [r.kernel for r in rooflines]
    return {
        (r.kernel, r.launch): (
            r.kernel if names.count(r.kernel) == 1 else f"{r.kernel} (launch {r.launch})",
            KERNEL_COLORS[i % len(KERNEL_COLORS)],
        )
        for i, r in enumerate(rooflines)
    }


def _roofs(fig: go.Figure, memory: dict, compute: dict, x0: float, x1: float) -> None:
    """The memory roofs (slopes, a colour per level) up to the highest compute roof, and the compute roofs (dashed)."""
    import plotly.graph_objects as go

    peak = max((c.value for c in compute.values()), default=None)
    for level, roof in memory.items():
        xs = [x0, min(peak / roof.value if peak else x1, x1)]
        line = go.Scatter(
            x=xs,
            y=[x * roof.value / TERA for x in xs],
            mode="lines",
            name=f"{level} roof {roof.value / TERA:.1f} TB/s",
            line={"color": LEVEL_STYLE[level][1], "width": 2},
            hoverinfo="name",
        )
        fig.add_trace(line, row=1, col=1)
    for name, roof in compute.items():
        line = go.Scatter(
            x=[x0, x1],
            y=[roof.value / TERA] * 2,
            mode="lines",
            name=f"{name} roof {roof.value / TERA:.0f} TFLOP/s",
            line={"color": COMPUTE_COLOR, "dash": "dash"},
            hoverinfo="name",
        )
        fig.add_trace(line, row=1, col=1)


def _label(r: KernelRoofline, name: str) -> str:
    """A point's label: the kernel's name, where it stands and what was counted, on three lines."""
    reached = r.reached()
    return f"{name}<br>{phrase(*reached, sep='<br>')}" if reached else name


def _hover(r: KernelRoofline, name: str, level: str, top: str) -> str:
    notes = "".join("<br>" + "<br>".join(textwrap.wrap(n, 60)) for n in r.notes)
    return (
        f"<b>{name}</b><br>{r.precision}: {r.flop_rate / TERA:.3g} TFLOP/s<br>"
        f"{level}: {r.intensity(level):.3g} FLOP/byte, {r.byte_rates[level] / TERA:.3g} TB/s<br>"
        f"{r.label(level)}<br>top bottleneck: {top}{notes}"
    )


def _roofline(
    fig: go.Figure,
    rooflines: list[KernelRoofline],
    styles: dict[tuple[str, int], tuple[str, str]],
    top: dict[tuple[str, int], str],
    arrows: Sequence[tuple[KernelRoofline, KernelRoofline]],
) -> None:
    """The roofs and the kernels with floating-point work, in the figure's first row: a trace per kernel, its
    levels' markers joined by a thin line, labelled at its DRAM point where a label fits."""
    import plotly.graph_objects as go

    memory = _highest(c for r in rooflines for c in r.memory.values())
    precisions = {r.precision for r in rooflines if r.precision} or {"FP32"}
    compute = _highest(c for r in rooflines for c in r.compute.values() if c.name in precisions)
    x0, x1 = _x_range(rooflines, memory, compute)
    _roofs(fig, memory, compute, x0, x1)
    ys = [r.flop_rate / TERA for r in rooflines if r.flop_rate > 0] + [c.value / TERA for c in compute.values()]
    y_range = (min(ys, default=1) / 10, max(ys, default=1) * 10)
    # DRAM first: the legend shows a kernel with its first marker
    placed = [(r, [(level, x) for level in LEVELS[::-1] if (x := r.intensity(level))]) for r in rooflines if r.flop_rate > 0]
    labelled = [(r, dict(levels)["DRAM"]) for r, levels in placed if "DRAM" in dict(levels)]
    places = dict(
        zip(
            [(r.kernel, r.launch) for r, _ in labelled],
            _label_places(
                [(x, r.flop_rate / TERA) for r, x in labelled],
                [_label(r, styles[(r.kernel, r.launch)][0]) for r, _ in labelled],
                (x0, x1),
                y_range,
                roofs=[c.value / TERA for c in compute.values()],
                markers=[(x, r.flop_rate / TERA) for r, levels in placed for _, x in levels],
            ),
            strict=True,
        )
    )
    for r, levels in placed:
        name, color = styles[(r.kernel, r.launch)]
        place = places.get((r.kernel, r.launch))
        fig.add_trace(
            go.Scatter(
                x=[x for _, x in levels],
                y=[r.flop_rate / TERA] * len(levels),
                mode="lines+markers+text",
                text=[_label(r, name) if level == "DRAM" and place else "" for level, _ in levels],
                textposition=[place or "top center" for _ in levels],
                cliponaxis=False,
                name=name,
                line={"color": color, "width": 1, "dash": "dot"},
                marker={
                    "symbol": [LEVEL_STYLE[level][0] for level, _ in levels],
                    "size": 12,
                    "color": color,
                    "line": {"width": 1, "color": "black"},
                },
                hovertext=[_hover(r, name, level, top.get((r.kernel, r.launch), "none")) for level, _ in levels],
                hoverinfo="text",
            ),
            row=1,
            col=1,
        )
    for level in [level for level in LEVELS[::-1] if any(level in dict(levels) for _, levels in placed)]:
        key = go.Scatter(
            x=[None],
            y=[None],
            mode="markers",
            name=f"marker: {level} intensity",
            marker={"symbol": LEVEL_STYLE[level][0], "size": 10, "color": "white", "line": {"width": 1, "color": "black"}},
        )
        fig.add_trace(key, row=1, col=1)
    _arrows(fig, arrows)
    fig.update_xaxes(_decades(x0, x1), title="arithmetic intensity (FLOP / byte)", row=1, col=1)
    fig.update_yaxes(_decades(*y_range), title="performance (TFLOP/s)", row=1, col=1)


def _arrows(fig: go.Figure, arrows: Sequence[tuple[KernelRoofline, KernelRoofline]]) -> None:
    """An arrow from each old DRAM point to its new one, its hover text saying where each stands."""
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
                hovertext=f"{old.kernel}: {old.label()}<br>→ {new.kernel}: {new.label()}",
            )


def _bandwidth(
    fig: go.Figure, rooflines: list[KernelRoofline], styles: dict[tuple[str, int], tuple[str, str]], *, row: int, alone: bool
) -> None:
    """Kernels without floating-point work: per memory level, the achieved bandwidth as a bar in % of that
    level's roof (its peak bandwidth), labelled with the share and the bytes per second."""
    import plotly.graph_objects as go

    top_pct = 100.0
    for r in rooflines:
        levels = [level for level in BANDWIDTH_LEVELS if r.byte_rates.get(level) and level in r.memory]
        pcts = [100 * r.byte_rates[level] / r.memory[level].value for level in levels]
        top_pct = max(top_pct, *pcts)
        name, color = styles[(r.kernel, r.launch)]
        fig.add_trace(
            go.Bar(
                x=[BANDWIDTH_LEVELS[level] for level in levels],
                y=pcts,
                name=name,
                marker={"color": color},
                showlegend=True,
                text=[
                    f"{p:.0f}%<br>{r.byte_rates[level] / TERA:.2f} of {r.memory[level].value / TERA:.1f} TB/s"
                    + (f"<br>unit busy {busy:.0f}%" if (busy := _busier(r, level, p)) else "")
                    for level, p in zip(levels, pcts, strict=True)
                ],
                textposition="auto",
                textfont={"size": 11},
                cliponaxis=False,
                hovertext=[
                    f"<b>{name}</b><br>{level}: {r.label(level)}{_busy_hover(r, level, p)}"
                    for level, p in zip(levels, pcts, strict=True)
                ],
                hoverinfo="text",
            ),
            row=row,
            col=1,
        )
    fig.add_hline(y=100, line={"color": COMPUTE_COLOR, "dash": "dash"}, row=row, col=1)
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
    fig.update_yaxes(
        title="% of the level's peak bandwidth<br>(dashed: its roof)", range=[0, top_pct * 1.3], ticksuffix="%", row=row, col=1
    )
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
    markers: Sequence[tuple[float, float]] = (),
) -> list[str | None]:
    """Where each point's label goes so that no two labels overlap, no label covers a marker at ``markers`` or
    crosses a horizontal (compute) roof at ``roofs``, and every label is inside the plot: above, below, right or
    left of the point, or nowhere (the legend and the hover text still name it). Greedy, in the order given;
    sizes in the plot's pixels, roughly."""
    sx = PLOT_PX[0] / (_log(x_range[1]) - _log(x_range[0]))
    sy = PLOT_PX[1] / (_log(y_range[1]) - _log(y_range[0]))

    def at(x: float, y: float) -> tuple[float, float]:
        return (_log(x) - _log(x_range[0])) * sx, (_log(y) - _log(y_range[0])) * sy

    lines = [(_log(y) - _log(y_range[0])) * sy for y in roofs]
    half = MARKER_PX / 2
    taken = [(px - half, py - half, px + half, py + half) for px, py in (at(x, y) for x, y in markers)]
    out: list[str | None] = []
    for (x, y), label in zip(points, labels, strict=True):
        rows = label.split("<br>")
        w, h = CHAR_PX * max(map(len, rows)), LINE_PX * len(rows)
        px, py = at(x, y)
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
        place = next(iter(inside), None)
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
