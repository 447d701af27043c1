"""The tabbed dashboard of a result: Summary, Roofline, Metrics, Source, Raw rules; for a workload
(``%%profile --all-kernels``) a Workload tab first, its kernels by time and a Lift button."""

from __future__ import annotations

from html import escape
from pathlib import Path
from typing import TYPE_CHECKING

import ipywidgets as widgets
from IPython.display import display

from kernel_lab.display import html, metrics, rules, source
from kernel_lab.display.page import per_kernel, roofline_figure
from kernel_lab.errors import KernelLabError
from kernel_lab.widgets.guard import guarded

if TYPE_CHECKING:
    from kernel_lab.lifting.table import Workload
    from kernel_lab.results.profile import Result

TABS = ("Summary", "Roofline", "Metrics", "Source", "Raw rules")
ALL_SECTIONS = "(all sections)"
MAX_ROWS = 200
LIFTED = Path("lifted")  # where the Lift button writes the cells it lifts (relative to the notebook's folder)


def metrics_view(result: Result, errors: widgets.Output) -> widgets.VBox:
    """The full metric table, sections in reading order, filtered by section and by a search string."""
    df = metrics.table(result.df)
    section = widgets.Dropdown(options=[ALL_SECTIONS, *metrics.sections(df)], description="section")
    search = widgets.Text(placeholder="metric name contains…", description="search")
    table = widgets.HTML()

    @guarded(errors)
    def refresh(_change=None) -> None:
        rows = df if section.value == ALL_SECTIONS else df[df.section == section.value]
        if search.value:
            rows = rows[rows.metric.str.contains(search.value, case=False, regex=False)]
        shown = f", first {MAX_ROWS} shown" if len(rows) > MAX_ROWS else ""
        table.value = (
            f"<p>{len(rows)} metric values{shown}</p>{html.STYLE}<div class='kl'>{metrics.render(rows.head(MAX_ROWS))}</div>"
        )

    section.observe(refresh, names="value")
    search.observe(refresh, names="value")
    refresh()
    return widgets.VBox([widgets.HBox([section, search]), table])


def workload_view(workload: Workload, errors: widgets.Output) -> widgets.VBox:
    """The workload's kernels by time, and Lift: the chosen kernel as a self-contained cell, written to a file."""
    parts: list[widgets.Widget] = [widgets.HTML(workload._repr_html_())]
    if not workload.liftable:
        return widgets.VBox(parts)
    pick = widgets.Dropdown(options=workload.liftable, description="kernel")
    button = widgets.Button(description="Lift", icon="scissors", tooltip="Write this kernel's launch as a cell to optimize")
    status = widgets.HTML()
    shown = widgets.Textarea(layout=widgets.Layout(width="100%", height="24em", display="none"))

    @guarded(errors)
    def lift(_button: widgets.Button) -> None:
        try:
            cell = workload.lift(pick.value)
        except KernelLabError as err:  # one line, what to do: not a traceback
            status.value = f"<span class='note'>{escape(str(err))}</span>"
            return
        LIFTED.mkdir(exist_ok=True)
        path = LIFTED / f"{pick.value}.py"
        path.write_text(cell)
        shown.value, shown.layout.display = cell, "block"
        status.value = (
            f"Wrote <code>{path}</code>: <code>%load {path}</code> puts it into a cell, then <code>%%optimize</code> it"
            f" (or <code>kernel_lab.optimize('{path}')</code>)."
        )

    button.on_click(lift)
    return widgets.VBox([*parts, widgets.HBox([pick, button]), status, shown])


def dashboard(result: Result, workload: Workload | None = None) -> widgets.VBox:
    """Build the dashboard widget for ``result`` (errors from its callbacks appear under it); ``workload``: its
    kernels by time, in a first tab."""
    errors = widgets.Output()
    roofline = widgets.Output()
    with roofline:
        display(roofline_figure(result))
    tabs = widgets.Tab(
        children=[
            widgets.HTML(html.render(result)),
            roofline,
            metrics_view(result, errors),
            widgets.HTML(f"{html.STYLE}{source.STYLE}<div class='kl'>{per_kernel(result, source.render)}</div>"),
            widgets.HTML(html.STYLE + per_kernel(result, rules.render)),
        ]
    )
    titles: tuple[str, ...] = TABS
    if workload is not None:
        tabs.children = (workload_view(workload, errors), *tabs.children)
        titles = ("Workload", *TABS)
    for i, title in enumerate(titles):
        tabs.set_title(i, title)
    return widgets.VBox([tabs, errors])
