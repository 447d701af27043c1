"""The %%optimize summary: the versions, the best version's side-by-side diff, warnings, before/after."""

from __future__ import annotations

import difflib
import re
from functools import lru_cache
from html import escape
from pathlib import Path
from typing import TYPE_CHECKING

from kernel_lab.display.html import STYLE
from kernel_lab.display.text import wrap
from kernel_lab.display.transcript import transcript_html
from kernel_lab.session import TIMING_NOTE, speed

if TYPE_CHECKING:
    import pandas as pd

    from kernel_lab.results.optimize import OptimizeResult


def _warnings(result: OptimizeResult) -> list[str]:
    """The judge's warnings, each saying whether it still blocks its version."""
    s = result.session
    out = []
    for v in s.versions:
        for w in v.warnings:
            state = "allowed by you" if v.number in s.confirmed else f"blocked until you check it and `.confirm({v.number})`"
            out.append(f"{v.label} ({state}): {w}")
    return out


def text(result: OptimizeResult) -> str:
    """The summary for a terminal: lines of at most :data:`~kernel_lab.display.text.WIDTH` columns but the diff's."""
    s = result.session
    best = result.best
    lines = [*wrap(f"Kernel Lab optimize: {len(s.versions)} version(s) in {s.path}; stopped: {result.stopped}."), *_rows(result)]
    if _timed(result):
        lines += wrap(TIMING_NOTE)
    if why := s.why_best():  # read now: the user may have rejected a version since the run
        lines += wrap(why)
    lines += [line for n in (*result.notes, *_warnings(result)) for line in wrap(f"! {n}", "", "  ")]
    if result.spent is not None:
        lines += wrap(f"Asking the model: {result.spent.text()}.")
    if best is s.original:
        lines.append("No verified version was faster than the original; the original is kept.")
    else:
        lines += wrap(
            f"Best: {best.label}, {speed(best)} faster, correct on every check; its source is {s.folder(best) / 'cell.py'}. Diff:"
        )
        lines += difflib.unified_diff(s.original.source.splitlines(), best.source.splitlines(), "v000", best.label, lineterm="")
    return "\n".join(lines)


def _rows(result: OptimizeResult) -> list[str]:
    """The versions table without its two wordy columns (numbers to the right, words to the left), each
    version's origin and note under its row."""
    table = _table(result)
    shown = table.drop(columns=["origin", "note"])
    numbers = set(shown.select_dtypes("number").columns)
    cells = [[str(c) for c in shown.columns]] + [
        ["–" if v != v else f"{v:.3g}" if c in numbers else str(v) for c, v in row.items()] for _, row in shown.iterrows()
    ]
    widths = [max(len(r[i]) for r in cells) for i in range(len(shown.columns))]
    lines = [
        "  ".join(t.rjust(w) if c in numbers else t.ljust(w) for c, t, w in zip(shown.columns, r, widths, strict=True)).rstrip()
        for r in cells
    ]
    out = [lines[0]]
    for line, origin, note in zip(lines[1:], table["origin"], table["note"], strict=True):
        out += [line, *wrap(f"{origin}: {note}" if note and note != "–" else origin, "    ", "      ")]
    return out


_NEXT = re.compile(r'<t([dh]) class="diff_next"[^>]*>.*?</t\1>')  # difflib's "f"/"n"/"t" jump links
_THREE = "<colgroup></colgroup> <colgroup></colgroup> <colgroup></colgroup>"


def diff_table(before: str, after: str, names: tuple[str, str]) -> str:
    """A side-by-side HTML diff of two sources (changed lines only, with context); long lines wrap in the browser.

    Each side is a line-number column and a text column: difflib's column of jump links is left out."""
    table = difflib.HtmlDiff().make_table(before.splitlines(), after.splitlines(), *names, context=True, numlines=3)
    return _NEXT.sub("", table).replace(_THREE, "<colgroup></colgroup> <colgroup></colgroup>")


def before_after(result: OptimizeResult) -> str:
    """The before/after view of the original and the best version, when both were profiled."""
    s = result.session
    reports = [s.folder(v) / "profile.ncu-rep" for v in (s.original, result.best)]
    if result.best is s.original or not all(r.exists() for r in reports):
        return ""
    return _compared(*reports)


@lru_cache(maxsize=16)
def _compared(before: Path, after: Path) -> str:
    """The comparison of two reports, parsed once: the static summary and the panel both show it,
    and a session's reports never change once written."""
    from kernel_lab.analysis import conductor
    from kernel_lab.analysis.compare import compare
    from kernel_lab.display.compare import html as compare_html
    from kernel_lab.profiling import report

    first, second = (conductor.diagnose(report.load(path))[0] for path in (before, after))
    return compare_html(compare(first, second))


DIFF_STYLE = (
    "<style>.kl table.diff {display: table; width: 100%; table-layout: fixed}"  # both sides share the width
    " .kl table.diff colgroup:nth-of-type(2n+1) {width: 3.2em}"
    " .kl table.diff td {text-align: left; font-family: monospace; font-size: 12px; white-space: normal; overflow-wrap: anywhere}"
    " .diff_add {background:#dfd} .diff_chg {background:#ffa} .diff_sub {background:#fdd}</style>"
)


def header(result: OptimizeResult) -> str:
    """Banner, notes and warnings, and the versions table."""
    s = result.session
    warnings = "".join(f"<div class='note'>⚠ {escape(w)}</div>" for w in (*result.notes, *_warnings(result)))
    return (
        f"<div class='kl'><div class='banner'>Kernel Lab optimize: {len(s.versions)} version(s) kept in "
        f"<code>{escape(str(s.path))}</code>; stopped: {escape(result.stopped)}.</div>{warnings}"
        f"{_table(result).to_html(index=False, na_rep='–', float_format=lambda v: f'{v:.3g}', classes='versions')}"
        + (f"<p class='caption'>{escape(TIMING_NOTE)}</p>" if _timed(result) else "")
        + (f"<p class='caption'>{escape(why)}</p>" if (why := s.why_best()) else "")
        + "</div>"
    )


def _table(result: OptimizeResult) -> pd.DataFrame:
    """The versions table as shown: a missing word is a dash, like a missing number."""
    table = result.session.table()
    words = table.select_dtypes(exclude="number").columns
    return table.fillna(dict.fromkeys(words, "–"))


def _timed(result: OptimizeResult) -> bool:
    return any(v.reference_ms is not None for v in result.session.versions)


def version_view(result: OptimizeResult, number: int) -> str:
    """One version: what it is, how it did, and its side-by-side diff against the original."""
    s = result.session
    v = s.versions[number]
    if v is s.original:
        return "<div class='kl'><p>v000 is your original cell, the reference every version is checked against.</p></div>"
    if number in s.rejected:
        state = "rejected by you"
    elif v.correct is False:
        state = f"not usable: {v.reason}"
    elif s.blocked(v):
        state = f"correct, but blocked by the judge's warning until you check it and confirm it (`.confirm({number})`)"
    else:
        state = "correct on every check"
    said = f"{speed(v)} vs the original" + ("" if v.significant else " (within noise)") if v.speedup else "not timed"
    return (
        f"<div class='kl'><p><b>{v.label}</b> ({escape(v.origin)}{f', answers {escape(v.answers)}' if v.answers else ''}): {escape(said)}, "
        f"{escape(state)}. {escape(v.explanation)}</p>"
        + "".join(f"<div class='note'>⚠ {escape(w)}</div>" for w in v.warnings)
        + diff_table(s.original.source, v.source, ("v000 (original)", v.label))
        + transcript_html(s.folder(v))
        + "</div>"
    )


def html(result: OptimizeResult) -> str:
    s = result.session
    best = result.best
    if best is s.original:
        verdict = "<p>No verified version was faster than the original; the original is kept.</p>"
        diff = ""
    else:
        verdict = (
            f"<p><b>Best: {best.label}, {escape(speed(best))} faster</b>, correct on every check. {escape(best.explanation)}"
            " <code>_.apply()</code> puts it in a new cell below (your cell is not changed).</p>"
        )
        diff = diff_table(s.original.source, best.source, ("v000 (original)", best.label))
    if result.spent is not None:
        verdict += f"<p>Asking the model: {escape(result.spent.text())}.</p>"
    return f"{STYLE}{DIFF_STYLE}{header(result)}<div class='kl'>{verdict}{diff}</div>{before_after(result)}"
