"""HTML rendering of a :class:`~kernel_lab.result.Result` for notebooks (no JavaScript needed)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from html import escape
from typing import TYPE_CHECKING, Any

from kernel_lab.analysis.roofline import phrase
from kernel_lab.display.metrics import fmt
from kernel_lab.display.words import banner, cell_lines, kernel_facts, kernel_line, source_ref, verdict_lines
from kernel_lab.models import Bottleneck, CellReading, Diagnosis
from kernel_lab.results.tables import SUMMARY_COLUMNS

if TYPE_CHECKING:
    from kernel_lab.results.profile import Result

STYLE = """<style>
.kl {font-family: system-ui, sans-serif; font-size: 13px; line-height: 1.45; max-width: min(980px, 100%); box-sizing: border-box; overflow-wrap: anywhere;
     contain: inline-size}
.kl .banner {padding: 6px 10px; border-radius: 4px; background: #eef4ff; border-left: 4px solid #3b6fd8}
.kl .banner.replay {background: #fff6e0; border-left-color: #d89b00}
.kl .note {color: #8a4b00}
.kl .cell {margin: 6px 0; padding: 6px 10px; border-radius: 4px; background: #f1f7ec; border-left: 4px solid #4c8a2a}
.kl .cell details {margin-top: 2px}
.kl .cell details > summary {color: #555; cursor: pointer}
.kl table {border-collapse: collapse; margin: 6px 0; display: block; max-width: 100%; overflow-x: auto}
.kl td, .kl th {border: 1px solid #ddd; padding: 2px 6px; text-align: right; overflow-wrap: normal}
.kl table.summary td, .kl table.summary th {white-space: nowrap}
.kl table.summary td.kernel {white-space: normal; overflow-wrap: anywhere; min-width: 9em; max-width: 18em}
.kl table.summary td.top_bottleneck, .kl table.summary th.roof_pct {text-align: left}
.kl table.summary td.roof_pct {white-space: normal; max-width: 13em; text-align: left}
.kl details.more > summary {color: #555; cursor: pointer}
.kl table.versions td:last-child, .kl table.versions th:last-child, .kl table.diff th {text-align: left}
.kl table.text td, .kl table.text th {text-align: left; vertical-align: top}
.kl td:first-child, .kl th:first-child {text-align: left}
.kl .kernel {margin-top: 14px}
.kl .facts, .kl .caption {color: #555}
.kl ol {padding-left: 22px}
.kl .kind {font-family: monospace; background: #f0f0f0; padding: 1px 5px; border-radius: 3px}
.kl .score {color: #777}
.kl pre {background: #f7f7f7; padding: 4px 8px; margin: 4px 0; white-space: pre-wrap; word-break: normal}
</style>"""


def boxed(render: Callable[[Any], str]) -> Callable[[Any], str]:
    """For a ``_repr_html_``: its HTML in Kernel Lab's style, the same in every notebook view."""

    @functools.wraps(render)
    def styled(self: Any) -> str:
        return f"{STYLE}<div class='kl'>{render(self)}</div>"

    return styled


#: the summary table's columns at a glance (they fit a laptop's notebook), each with its header and the way its
#: value is shown; the rest of the summary columns are one click away (:data:`MORE`)
GLANCE: dict[str, tuple[str, Callable[[dict], str]]] = {
    "kernel": ("kernel", lambda row: row["kernel"]),
    "duration_us": ("µs", lambda row: f"{row['duration_us']:,.1f}"),
    "roof_pct": ("roofline", lambda row: phrase(row["roof_pct"] / 100, row["roof"]).removeprefix("at ")),
    "sm_pct": ("SM %", lambda row: f"{row['sm_pct']:.0f}"),
    "memory_pct": ("memory %", lambda row: f"{row['memory_pct']:.0f}"),
    "dram_pct": ("DRAM %", lambda row: f"{row['dram_pct']:.0f}"),
    "achieved_occupancy_pct": ("occupancy %", lambda row: f"{row['achieved_occupancy_pct']:.0f}"),
    "top_bottleneck": ("top bottleneck", lambda row: row["top_bottleneck"]),
}
MORE: dict[str, tuple[str, Callable[[dict], str]]] = {
    "kernel": GLANCE["kernel"],
    "grid_size": ("grid", lambda row: f"{row['grid_size']:,.0f}"),
    "block_size": ("block", lambda row: f"{row['block_size']:,.0f}"),
    "waves": ("waves", lambda row: f"{row['waves']:.2f}"),
    "registers_per_thread": ("regs", lambda row: f"{row['registers_per_thread']:.0f}"),
    "shared_mem_per_block": ("smem B", lambda row: f"{row['shared_mem_per_block']:,.0f}"),
    "theoretical_occupancy_pct": ("theoretical %", lambda row: f"{row['theoretical_occupancy_pct']:.0f}"),
    "occupancy_limiter": ("limited by", lambda row: row["occupancy_limiter"]),
    "dram_bytes": ("DRAM bytes", lambda row: fmt(row["dram_bytes"], "byte")),
}


def _cell(column: str, show: Callable[[dict], str], row: dict) -> str:
    value = row[column]
    text = "–" if value is None or value != value else show(row)
    return f"<td class='{column}'>{escape(text)}</td>"


def _table(rows: list[dict], columns: dict[str, tuple[str, Callable[[dict], str]]]) -> str:
    head = "".join(
        f"<th class='{c}' title='{escape(c)}: {escape(SUMMARY_COLUMNS[c])}'>{escape(name)}</th>"
        for c, (name, _) in columns.items()
    )
    body = "".join("<tr>" + "".join(_cell(c, show, row) for c, (_, show) in columns.items()) + "</tr>" for row in rows)
    return f"<table class='summary'><tr>{head}</tr>{body}</table>"


def _summary_table(result: Result) -> str:
    """The summary at a glance, and the launch, resources and bytes of each kernel under a click."""
    rows = result.summary.to_dict("records")
    return (
        _table(rows, GLANCE)
        + f"<details class='more'><summary>launch, registers, shared memory, DRAM bytes</summary>{_table(rows, MORE)}</details>"
    )


def _bottleneck(b: Bottleneck) -> str:
    parts = [
        f"<li><span class='kind'>{escape(b.kind)}</span> <b>{escape(b.summary)}</b>"
        f" <span class='score'>score {b.score:.2f}</span><div>{escape(b.hint)}</div>"
    ]
    if b.source_lines:
        parts.append("<pre>" + "\n".join(escape(source_ref(s)) for s in b.source_lines) + "</pre>")
    details = "".join(
        f"<tr><td>{escape(str(name))}</td><td>{value:,.4g}</td></tr>"
        if isinstance(value, float)
        else f"<tr><td>{escape(str(name))}</td><td>{escape(str(value))}</td></tr>"
        for name, value in b.evidence.items()
    )
    rules = "".join(
        f"<li><b>{escape(r.rule)}</b> {escape(r.title)}: {escape(r.message)}"
        + (f" <i>(est. speedup {r.speedup_pct:.0f}%)</i>" if r.speedup_pct is not None else "")
        + "</li>"
        for r in b.ncu_rules
    )
    parts.append(
        f"<details><summary>metrics behind this</summary><table>{details}</table>"
        + (f"Nsight Compute says:<ul>{rules}</ul>" if rules else "")
        + "</details></li>"
    )
    return "".join(parts)


def _diagnosis(d: Diagnosis) -> str:
    body = "".join(_bottleneck(b) for b in d.bottlenecks) or "<li>No significant bottleneck found in the collected metrics.</li>"
    skipped = (
        f"<div class='facts'>Not evaluated (metrics not collected): {escape(', '.join(sorted(d.not_evaluated)))}</div>"
        if d.not_evaluated
        else ""
    )
    return (
        f"<div class='kernel'><b>{escape(kernel_line(d.kernel))}</b>"
        f"<div class='facts'>{escape(' · '.join(kernel_facts(d.kernel)))}</div>"
        + "".join(f"<div class='note'>{escape(v)}</div>" for v in verdict_lines(d))
        + f"<ol>{body}</ol>{skipped}</div>"
    )


def _whole_cell(r: CellReading) -> str:
    """The dashboard's first line, the whole cell, above the kernel table; its tensors, gaps and findings a click away."""
    headline, *details = cell_lines(r)
    more = f"<ul class='facts'>{''.join(f'<li>{escape(d)}</li>' for d in details)}</ul>" if details else ""
    found = f"<ol>{''.join(_bottleneck(b) for b in r.findings)}</ol>" if r.findings else ""
    inside = f"<details><summary>more on the whole cell</summary>{more}{found}</details>" if more or found else ""
    return f"<div class='cell'>{escape(headline)}{inside}</div>"


def render(result: Result) -> str:
    profile = result.profile
    notes = "".join(f"<div class='note'>⚠ {escape(n)}</div>" for n in profile.notes)
    cls = "banner replay" if profile.replay else "banner"
    cell = _whole_cell(result.cell) if result.cell is not None else ""
    return (
        f"{STYLE}<div class='kl'><div class='{cls}'>{escape(banner(profile))}</div>{notes}{cell}"
        f"{_summary_table(result)}{''.join(_diagnosis(d) for d in result.diagnoses)}</div>"
    )
