"""The before/after object ``kernel_lab.compare`` returns: the analysis' comparison, drawn."""

from __future__ import annotations

from dataclasses import dataclass, fields

from kernel_lab.analysis import compare as analysis


@dataclass(frozen=True)
class Comparison(analysis.Comparison):
    """Two versions of a kernel side by side; text in a terminal, HTML with the roofline in a notebook."""

    @classmethod
    def of(cls, comparison: analysis.Comparison) -> Comparison:
        return cls(**{f.name: getattr(comparison, f.name) for f in fields(comparison)})

    def __str__(self) -> str:
        from kernel_lab.display.compare import text

        return text(self)

    def _repr_html_(self) -> str:
        from kernel_lab.display.compare import html

        return html(self)
