"""The user's source as Nsight Compute's source view shows it: highlighted code, a bar per counter with
each line's share, the hottest lines tinted.

Each line's code sits in a ``<pre>``: a static HTML export (nbconvert re-parses outputs with BeautifulSoup,
which collapses whitespace-only text outside ``<pre>``) would otherwise lose the indentation."""

from __future__ import annotations

from html import escape

from pygments.formatters.html import HtmlFormatter
from pygments.lexer import Lexer
from pygments.lexers import TextLexer, get_lexer_for_filename
from pygments.token import STANDARD_TYPES, _TokenType
from pygments.util import ClassNotFound

from kernel_lab.analysis.source import file_lines
from kernel_lab.models import Kernel

#: per-line counters shown, with their column title
COLUMNS = {
    "stall_samples": "stall samples",
    "excessive_sectors": "excessive sectors",
    "shared_excessive_wavefronts": "bank-conflict wavefronts",
}
HOT = 0.01  # a line with this share of a counter or more is tinted
LONG = 120  # files longer than this show only the lines around hot ones
CONTEXT = 4  # lines kept on each side of a hot line in a long file

#: CSS of :func:`render` (selectors specific enough to beat Kernel Lab's and JupyterLab's table styles wherever
#: their <style> lands in the page), with pygments' token colours
STYLE = (
    "<style>"
    ".kl-src .srcbox {overflow: auto; max-width: 100%; max-height: 40em; border: 1px solid #ddd; margin: 4px 0 10px}"
    ".kl-src table.src {display: table; border-collapse: collapse; margin: 0; min-width: 100%; max-width: none; font-size: 12px}"
    ".kl-src table.src td, .kl-src table.src th {border: none; padding: 0 6px; text-align: right; vertical-align: top;"
    " white-space: nowrap; line-height: 1.45; background: none}"
    ".kl-src table.src th {position: sticky; top: 0; background: #f3f3f3; font-weight: 600; border-bottom: 1px solid #ddd; z-index: 1}"
    ".kl-src table.src th.code {text-align: left}"
    ".kl-src table.src td.ln {color: #888; font-family: monospace; border-right: 1px solid #ddd; user-select: none}"
    ".kl-src table.src td.bar {min-width: 4.5em; color: #333; font-variant-numeric: tabular-nums}"
    ".kl-src table.src td.code {white-space: pre; text-align: left; width: 100%;"
    " font-family: SFMono-Regular, Menlo, Consolas, 'DejaVu Sans Mono', monospace}"
    ".kl-src table.src td.code pre {margin: 0; padding: 0; border: none; background: none; font: inherit; white-space: pre}"
    ".kl-src table.src tr.gap td {color: #888; background: #fafafa; font-style: italic; text-align: left}"
    ".kl-src .file {margin: 8px 0 2px; font-family: monospace}"
    + "".join(HtmlFormatter(style="default").get_token_style_defs(".kl-src td.code"))
    + "</style>"
)


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


def _css_class(kind: _TokenType) -> str:
    while kind not in STANDARD_TYPES:
        kind = kind.parent
    return STANDARD_TYPES[kind]


def _lexer(file: str) -> Lexer:
    try:
        return get_lexer_for_filename(file, stripnl=False)
    except ClassNotFound:
        return TextLexer(stripnl=False)


def highlight(lines: tuple[str, ...], file: str) -> list[str]:
    """Each line as HTML with pygments' token classes (CSS in :data:`STYLE`); a token spanning lines is split."""
    out: list[str] = [""]
    for kind, value in _lexer(file).get_tokens("\n".join(lines)):
        css = _css_class(kind)
        for i, part in enumerate(value.split("\n")):
            if i:
                out.append("")
            if part:
                out[-1] += f"<span class='{css}'>{escape(part)}</span>" if css not in ("", "w") else escape(part)
    return out[: len(lines)] + [""] * (len(lines) - len(out))


def _shown(count: int, heat: dict[int, float]) -> list[int]:
    """Line numbers shown: all of a short file, the hot lines and their neighbours in a long one."""
    if count <= LONG:
        return list(range(1, count + 1))
    near = {n for line, h in heat.items() if h >= HOT for n in range(line - CONTEXT, line + CONTEXT + 1)}
    return [n for n in range(1, count + 1) if n in near]


def _file(kernel: Kernel, file: str) -> str:
    shares: dict[str, dict[int, float]] = {}
    for counter in COLUMNS:
        values = kernel.line_counters.get(counter, {})
        total = sum(values.values())
        if total:
            shares[counter] = {ln: v / total for (f, ln), v in values.items() if f == file}
    shares = {c: s for c, s in shares.items() if any(s.values())}
    heat = {ln: max(s.get(ln, 0.0) for s in shares.values()) for s in shares.values() for ln in s}
    lines = _lines(kernel, file)
    code = highlight(lines, file)
    head = "".join(f"<th>{escape(COLUMNS[c])}</th>" for c in shares)
    rows, previous = [], 0
    for number in _shown(len(lines), heat):
        if number > previous + 1:
            rows.append(f"<tr class='gap'><td></td><td colspan='{len(shares) + 1}'>⋯ {number - previous - 1} lines</td></tr>")
        previous = number
        bars = "".join(_bar(s.get(number, 0.0)) for s in shares.values())
        h = heat.get(number, 0.0)
        tint = f" style='background: rgba(230, 80, 40, {0.08 + 0.4 * min(h, 1):.2f})'" if h >= HOT else ""
        hot = " class='hot'" if tint else ""
        rows.append(
            f"<tr{hot}><td class='ln'{tint}>{number}</td>{bars}<td class='code'{tint}><pre>{code[number - 1]}</pre></td></tr>"
        )
    if previous < len(lines):
        rows.append(f"<tr class='gap'><td></td><td colspan='{len(shares) + 1}'>⋯ {len(lines) - previous} lines</td></tr>")
    if not lines:
        rows.append(f"<tr class='gap'><td></td><td colspan='{len(shares) + 1}'>source not in the report nor on disk</td></tr>")
    return (
        f"<div class='file'>{escape(file)}</div><div class='srcbox'><table class='src'>"
        f"<tr><th>line</th>{head}<th class='code'>code</th></tr>{''.join(rows)}</table></div>"
    )


def _bar(share: float) -> str:
    if not share:
        return "<td class='bar'></td>"
    width = max(share * 100, 2)
    text = f"{share:.0%}" if share >= 0.005 else "<1%"
    return f"<td class='bar' style='background: linear-gradient(90deg, #f08a5d {width:.0f}%, transparent {width:.0f}%)'>{escape(text)}</td>"


def render(kernel: Kernel) -> str:
    """Each hot file of ``kernel``: line numbers, a bar with the line's share of each counter, the highlighted code."""
    files = hot_files(kernel)
    if not files:
        return "<p>No source-level counters in this report (collect the SourceCounters section; build CUDA with -lineinfo).</p>"
    legend = "<p>Each bar is the line's share of the kernel's counter; tinted lines are the hot ones (as in Nsight Compute's source view).</p>"
    return f"<div class='kl-src'>{legend}{''.join(_file(kernel, f) for f in files)}</div>"
