"""The object ``%%profile``, ``kernel_lab.profile`` and ``kernel_lab.diagnose`` return."""
from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

from kernel_lab.models import Bottleneck, Diagnosis, Profile

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True, eq=False)
class Result:
    """A profile with its diagnosis. Renders as HTML in Jupyter and as text in a terminal."""

    profile: Profile
    diagnoses: tuple[Diagnosis, ...]

    @cached_property
    def df(self) -> pd.DataFrame:
        """Every collected metric, tidy: ``launch, kernel, metric, value, unit`` (see tables.metrics_frame)."""
        from kernel_lab.tables import metrics_frame

        return metrics_frame(self.profile)

    @cached_property
    def summary(self) -> pd.DataFrame:
        """One row per kernel launch (columns documented in tables.SUMMARY_COLUMNS)."""
        from kernel_lab.tables import summary_frame

        return summary_frame(self.profile, list(self.diagnoses))

    @property
    def bottlenecks(self) -> dict[str, list[Bottleneck]]:
        """Ranked bottlenecks per kernel, keyed by kernel name (``name#launch`` when a name repeats)."""
        names = [d.kernel.name for d in self.diagnoses]
        return {
            (d.kernel.name if names.count(d.kernel.name) == 1 else f"{d.kernel.name}#{d.kernel.index}"): list(d.bottlenecks)
            for d in self.diagnoses
        }

    def to_json(self, **kwargs: Any) -> str:
        """The stable JSON of ``kernel-lab diagnose --json``: a list of kernels with ranked bottlenecks."""
        return json.dumps([d.to_dict() for d in self.diagnoses], **kwargs)

    def __str__(self) -> str:
        from kernel_lab.display.text import render

        return render(self)

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(str(self))

    def _repr_html_(self) -> str:
        from kernel_lab.display.html import render

        return render(self)
