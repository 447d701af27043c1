"""The tabbed dashboard of a result: Summary, Roofline, Metrics, Source, Raw rules."""

from __future__ import annotations

from typing import TYPE_CHECKING

import ipywidgets as widgets
from IPython.display import display

from kernel_lab.display import html, metrics, rules, source
from kernel_lab.display.page import per_kernel, roofline_figure
from kernel_lab.widgets.guard import guarded

if TYPE_CHECKING:
    from kernel_lab.results.profile import Result

TABS = ("Summary", "Roofline", "Metrics", "Source", "Raw rules")
ALL_SECTIONS = "(all sections)"
MAX_ROWS = 200


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


def dashboard(result: Result) -> widgets.VBox:
    """Build the dashboard widget for ``result`` (errors from its callbacks appear under it)."""
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
    for i, title in enumerate(TABS):
        tabs.set_title(i, title)
    return widgets.VBox([tabs, errors])
