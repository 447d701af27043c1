"""The object ``%%profile``, ``kernel_lab.profile`` and ``kernel_lab.diagnose`` return."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

from kernel_lab.frontend import mimebundle
from kernel_lab.models import Bottleneck, CellReading, Diagnosis, Profile

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True, eq=False)
class Result:
    """A profile with its diagnosis. Renders as HTML in Jupyter and as text in a terminal."""

    profile: Profile
    diagnoses: tuple[Diagnosis, ...]

    @cached_property
    def df(self) -> pd.DataFrame:
        """Every collected metric, tidy: ``launch, kernel, section, metric, value, unit`` (tables.metrics_frame)."""
        from kernel_lab.results.tables import metrics_frame

        return metrics_frame(self.profile)

    @cached_property
    def summary(self) -> pd.DataFrame:
        """One row per kernel launch (columns documented in tables.SUMMARY_COLUMNS)."""
        from kernel_lab.results.tables import summary_frame

        return summary_frame(self.profile, list(self.diagnoses))

    @cached_property
    def rooflines(self) -> tuple:
        """Roofline position of each kernel (analysis.roofline.KernelRoofline)."""
        from kernel_lab.analysis.roofline import roofline

        return tuple(roofline(k) for k in self.profile.kernels)

    @property
    def bottlenecks(self) -> dict[str, list[Bottleneck]]:
        """Ranked bottlenecks per kernel, keyed by kernel name (``name#launch`` when a name repeats)."""
        names = [d.kernel.name for d in self.diagnoses]
        return {
            (d.kernel.name if names.count(d.kernel.name) == 1 else f"{d.kernel.name}#{d.kernel.index}"): list(d.bottlenecks)
            for d in self.diagnoses
        }

    @cached_property
    def cell(self) -> CellReading | None:
        """The reading of the whole cell (least traffic, shared tensors and fusion, gaps), or None when the profile has
        no launch record (analysis/cell.py)."""
        from kernel_lab.analysis.conductor import diagnose_cell

        return diagnose_cell(self.profile)

    def to_json(self, **kwargs: Any) -> str:
        """The stable JSON of ``kernel-lab diagnose --json``: a list of kernels with ranked bottlenecks; with a
        launch record the first entry also holds the whole cell's reading under ``"cell"`` (the list stays a list)."""
        entries = [d.to_dict() for d in self.diagnoses]
        if entries and self.cell is not None:
            entries[0]["cell"] = self.cell.to_dict()
        return json.dumps(entries, **kwargs)

    def roofline(self):
        """The roofline chart (a plotly Figure)."""
        from kernel_lab.display.page import roofline_figure

        return roofline_figure(self)

    def save_html(self, path) -> None:
        """Write the whole diagnosis as a standalone HTML page (plotly inline, no network needed)."""
        from pathlib import Path

        from kernel_lab.display.page import page

        Path(path).write_text(page(self), encoding="utf-8")

    def __str__(self) -> str:
        from kernel_lab.display.text import render

        return render(self)

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(str(self))

    def _repr_html_(self) -> str:
        """Static HTML: summary and hints, roofline, source and rules (what a website shows)."""
        from kernel_lab.display.page import fragment

        return fragment(self)

    def dashboard(self):
        """The interactive tabbed view (ipywidgets)."""
        from kernel_lab.widgets.dashboard import dashboard

        return dashboard(self)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        """Text, static HTML, and in a Jupyter kernel the interactive dashboard on top of them."""
        return mimebundle(str(self), self._repr_html_(), self.dashboard)
