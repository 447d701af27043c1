"""The user's source with hot lines highlighted from Nsight Compute's per-line counters."""

from __future__ import annotations

from html import escape

from kernel_lab.analysis.source import file_lines
from kernel_lab.models import Kernel

#: per-line counters shown, with their column title
COLUMNS = {
    "stall_samples": "stall samples",
    "excessive_sectors": "excessive sectors",
    "shared_excessive_wavefronts": "bank-conflict wavefronts",
}


def _lines(kernel: Kernel, file: str) -> tuple[str, ...]:
    content = kernel.source_files.get(file)
    return tuple(content.splitlines()) if content is not None else file_lines(file)


def hot_files(kernel: Kernel) -> list[str]:
    """Source files of the kernel that carry per-line counters, most sampled first."""
    totals: dict[str, float] = {}
    for counter in COLUMNS:
        for (file, _), value in kernel.line_counters.get(counter, {}).items():
            totals[file] = totals.get(file, 0) + value
    return sorted(totals, key=lambda f: -totals[f])


def render(kernel: Kernel) -> str:
    """HTML table of each hot file: line number, per-line shares of each counter, the code."""
    files = hot_files(kernel)
    if not files:
        return "<p>No source-level counters in this report (collect the SourceCounters section; build CUDA with -lineinfo).</p>"
    parts = []
    for file in files:
        shares = {}
        for counter in COLUMNS:
            per_line = {ln: v for (f, ln), v in kernel.line_counters.get(counter, {}).items() if f == file}
            total = sum(kernel.line_counters.get(counter, {}).values())
            shares[counter] = {ln: v / total for ln, v in per_line.items()} if total else {}
        head = "".join(f"<th>{escape(t)}</th>" for t in COLUMNS.values())
        rows = []
        for number, text in enumerate(_lines(kernel, file), 1):
            cells = "".join(f"<td>{shares[c][number]:.0%}</td>" if shares[c].get(number) else "<td></td>" for c in COLUMNS)
            heat = max((shares[c].get(number, 0) for c in COLUMNS), default=0)
            style = f" style='background: rgba(230, 80, 40, {min(heat, 1) * 0.6:.2f})'" if heat >= 0.01 else ""
            rows.append(f"<tr{style}><td>{number}</td>{cells}<td><code>{escape(text)}</code></td></tr>")
        parts.append(
            f"<p><b>{escape(file)}</b></p><table class='src'><tr><th>line</th>{head}<th>code</th></tr>{''.join(rows)}</table>"
        )
    return "".join(parts)
