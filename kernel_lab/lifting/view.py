"""The workload table as text (a terminal, :data:`~kernel_lab.display.text.WIDTH` columns) and as HTML."""

from __future__ import annotations

from html import escape
from pathlib import PurePath
from typing import TYPE_CHECKING

from kernel_lab.analysis.roofline import phrase
from kernel_lab.display.html import STYLE
from kernel_lab.display.text import wrap
from kernel_lab.display.words import banner

if TYPE_CHECKING:
    from kernel_lab.lifting.table import Row, Workload


def where(row: Row) -> str:
    """'minilib/swiglu.py line 38', or what is known instead."""
    if row.file is None:
        return "no source (not a Triton kernel)"
    short = "/".join(PurePath(row.file).parts[-2:])
    return f"{short} line {row.line}" if row.line else short


def _roof(row: Row) -> str:
    return phrase(row.roof_pct / 100, row.roof) if row.roof_pct is not None and row.roof else "roofline not collected"


def _time(row: Row) -> str:
    if row.time_us is None:
        return "duration not collected"
    launches = f" in {row.launches} launches" if row.launches > 1 else ""
    return f"{row.time_us:,.1f} µs{launches}, {row.share:.0%} of the time ({row.cumulative:.0%} with those above)"


def text(workload: Workload) -> str:
    out = wrap(banner(workload.result.profile)) + wrap(workload.headline()) + [""]
    for rank, row in enumerate(workload.rows, 1):
        mark = "*" if row.kernel in workload.top else " "
        out += wrap(f"{mark}{rank:>2}. {row.kernel}  {_time(row)}", "", "     ")
        parts = [_roof(row), row.bottleneck or "no finding", where(row), row.origin]
        out += wrap(" · ".join(parts), "     ")
    out += ["", *(line for note in workload.notes for line in wrap(f"! {note}", "", "  "))]
    if workload.liftable:
        out += wrap(f'* the kernels named first. Lift one into a cell: kernel_lab.lift(result, "{workload.liftable[0]}")')
    return "\n".join(out)


#: the table's columns: header, the class that lays its cells out (display.html.STYLE's summary table)
COLUMNS = (("#", ""), ("kernel", "kernel"), ("µs", ""), ("share", ""), ("cumulative", ""), ("roofline", "roof_pct"),
           ("first finding", "top_bottleneck"), ("source", "kernel"))  # fmt: skip


def _cells(rank: int, row: Row) -> list[str]:
    return [
        str(rank), escape(row.kernel), "–" if row.time_us is None else f"{row.time_us:,.1f}",
        "–" if row.share is None else f"{row.share:.0%}", "–" if row.cumulative is None else f"{row.cumulative:.0%}",
        escape(_roof(row).removeprefix("at ")), escape(row.bottleneck or "–"),
        f"<span title='{escape(row.file or '')}'>{escape(where(row))}</span> · {escape(row.origin)}",
    ]  # fmt: skip


LEFT = "<style>.kl table.workload td.kernel, .kl table.workload td.gaps, .kl table.workload th {text-align: left}</style>"


def html(workload: Workload) -> str:
    head = "".join(f"<th class='{c}'>{h}</th>" for h, c in COLUMNS)
    body = []
    for rank, row in enumerate(workload.rows, 1):
        strong = " style='font-weight:600'" if row.kernel in workload.top else ""
        cells = "".join(f"<td class='{c}'>{v}</td>" for (_, c), v in zip(COLUMNS, _cells(rank, row)))
        body.append(f"<tr{strong}>{cells}</tr>")
    gaps = (
        "<tr><td></td><td class='kernel'>gaps between launches, CPU time</td><td class='gaps' colspan='6'>not measured</td></tr>"
    )
    kind = " replay" if workload.replay else ""
    notes = "".join(f"<p class='note'>{escape(n)}</p>" for n in workload.notes)
    return (
        f"{STYLE}{LEFT}<div class='kl'><div class='banner{kind}'>{escape(banner(workload.result.profile))}</div>"
        f"<p><b>{escape(workload.headline())}</b></p><table class='summary workload'><tr>{head}</tr>{''.join(body)}"
        f"{gaps}</table>{notes}</div>"
    )
