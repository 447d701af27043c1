"""The metric table as a learner reads it: sections by name in a useful order, readable numbers, internals last."""

from __future__ import annotations

import math
import re
from html import escape
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

#: Nsight Compute section id -> the name shown, in the order a learner reads them
SECTIONS = {
    "SpeedOfLight": "Throughput (speed of light)",
    "MemoryWorkloadAnalysis": "Memory",
    "MemoryWorkloadAnalysis_Tables": "Memory tables",
    "MemoryWorkloadAnalysis_Chart": "Memory chart",
    "Occupancy": "Occupancy",
    "LaunchStats": "Launch",
    "ComputeWorkloadAnalysis": "Compute",
    "WarpStateStats": "Warp stalls",
    "SchedulerStats": "Scheduler",
    "InstructionStats": "Instructions",
    "SourceCounters": "Source counters",
    "SpeedOfLight_RooflineChart": "Roofline",
}
OTHER = "Other"  # metrics no named section shows (Kernel Lab's extra metrics, ncu's "section0")
INTERNAL = "Internal"  # Nsight Compute's helper values: shown last
_UNNAMED = re.compile(r"(section\d*)?")
_SCALED = {"byte": "B", "byte/s": "B/s", "hz": "Hz"}
_PREFIXES = ("", "k", "M", "G", "T", "P")
STYLE = (
    "<style>.kl table.metrics td, .kl table.metrics th {text-align: left; white-space: nowrap}"
    " .kl table.metrics td:last-child {text-align: right; font-variant-numeric: tabular-nums}"
    " .kl table.metrics tr.section th {background: #f3f3f3; padding-top: 6px}</style>"
)


def section_name(section: str, metric: str, value: float) -> str:
    """The name a metric is listed under (:data:`SECTIONS`, :data:`OTHER` or :data:`INTERNAL`)."""
    if metric.startswith("derived_temp") or (metric.startswith("c2clink") and not value):  # NaN and 0 alike
        return INTERNAL
    if _UNNAMED.fullmatch(section):
        return OTHER
    return SECTIONS.get(section, section)


def fmt(value: float, unit: str) -> str:
    """``1,234``, ``97.30%``, ``1.97 GHz``, ``604.00 MB``: thousands separators, fixed decimals, the unit."""
    if math.isnan(value):
        return "–"
    if unit in _SCALED and value:
        power = min(max(int(math.log10(abs(value)) // 3), 0), len(_PREFIXES) - 1)
        return f"{value / 1000**power:,.2f} {_PREFIXES[power]}{_SCALED[unit]}"
    if abs(value) < 1e15 and value == int(value):
        text = f"{value:,.0f}"
    elif abs(value) >= 100:
        text = f"{value:,.1f}"
    elif abs(value) >= 0.01:
        text = f"{value:,.2f}"
    else:
        text = f"{value:.{2 - math.floor(math.log10(abs(value)))}f}"
    return f"{text}%" if unit == "%" else f"{text} {unit}".rstrip()


def shown(value: float, unit: str, instances: tuple[float, ...] | None = None) -> str:
    """A metric's value as :func:`fmt` writes it, or for an array metric what it is: ``65 values, 50% to 100%``
    (Nsight Compute's one number for it is the sum of its values: 5,706% for an occupancy curve)."""
    if not instances:
        return fmt(value, unit)
    lo, hi = min(instances), max(instances)
    return f"{len(instances)} values, " + (f"each {fmt(lo, unit)}" if lo == hi else f"{fmt(lo, unit)} to {fmt(hi, unit)}")


def table(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` (``Result.df``) ordered for reading: sections as :data:`SECTIONS` lists them, then unknown ones, Other
    and Internal; ``section`` holds the shown name and ``value`` the formatted text (with its unit)."""
    out = df.assign(section=[section_name(s, m, v) for s, m, v in zip(df.section, df.metric, df.value)])
    order = {name: i for i, name in enumerate(SECTIONS.values())}
    rank = out.section.map(lambda s: order.get(s, len(order) + {OTHER: 1, INTERNAL: 2}.get(s, 0)))
    out = out.assign(rank=rank, value=[shown(v, u, i) for v, u, i in zip(df.value, df.unit, df.instances)])
    out = out.sort_values(["launch", "rank", "section", "metric"], kind="stable")
    columns = ["section", "metric", "value"]
    return out[(["kernel"] if df.launch.nunique() > 1 else []) + columns].reset_index(drop=True)


def sections(frame: pd.DataFrame) -> list[str]:
    """The section names of a :func:`table`, in its order."""
    return list(dict.fromkeys(frame.section))


def render(frame: pd.DataFrame) -> str:
    """HTML of a :func:`table`: a heading row per section, then each metric's name and value."""
    columns = [c for c in frame.columns if c != "section"]
    rows, section = [], None
    for row in frame.itertuples(index=False):
        if row.section != section:
            section = row.section
            rows.append(f"<tr class='section'><th colspan='{len(columns)}'>{escape(str(section))}</th></tr>")
        rows.append("<tr>" + "".join(f"<td>{escape(str(getattr(row, c)))}</td>" for c in columns) + "</tr>")
    head = "".join(f"<th>{escape(c)}</th>" for c in columns)
    return f"{STYLE}<table class='metrics'><tr>{head}</tr>{''.join(rows)}</table>"
