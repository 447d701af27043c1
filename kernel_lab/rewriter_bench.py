"""Measure a model as a rewriter, KernelBench style: the loop with ``--rewriter llm`` over a folder of naive cells
(the course's naive kernels by default), and per cell whether a correct version came out, its speedup over the
original and over ``torch.compile`` of the cell's PyTorch reference (a ``torch_reference(*inputs)`` function, when
the cell defines one), tokens and cost. Without a GPU it runs on the CPU: Triton interpreted, each cell's recorded
report replayed (``<cell>.ncu-rep`` beside it), and says so first.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from kernel_lab.cells import language
from kernel_lab.course.catalog import LESSONS_DIR
from kernel_lab.display.text import WIDTH
from kernel_lab.errors import KernelLabError
from kernel_lab.loop import Event
from kernel_lab.settings import Settings

CPU_LINE = "On the CPU (Triton interpreted, reports replayed): no number here is a GPU's; CUDA cells skipped."
REFERENCE = re.compile(r"^def torch_reference\s*\(", re.M)


def naive_cells() -> list[Path]:
    """The course's naive kernels: each lesson's ``naive.py``."""
    return sorted(LESSONS_DIR.glob("*/naive.py"))


def cells_in(folder: str | Path | None) -> list[Path]:
    """The cells to measure: a folder's ``.py`` files, else the course's naive kernels."""
    if folder is None:
        return naive_cells()
    found = sorted(Path(folder).glob("*.py"))
    if not found:
        raise KernelLabError(f"No .py cells in {folder}.", fix="Point --cells at a folder of cells (make_inputs and run).")
    return found


@dataclass(frozen=True)
class Row:
    """How the rewriter did on one cell (``skipped``: why it was not run)."""

    cell: str
    correct: bool = False
    speedup: float | None = None  # the best version's over the original (1.0: none faster)
    over_compile: float | None = None  # over torch.compile of the cell's torch_reference
    tokens: int | None = None
    cost: float | None = None
    skipped: str = ""


@dataclass(frozen=True)
class Bench:
    """Every cell's row, and whether it ran on the CPU."""

    rows: tuple[Row, ...]
    cpu: bool
    model: str

    def text(self) -> str:
        """The table and its summary, at most :data:`WIDTH` columns."""
        head = f"kernel-lab bench-rewriter: model {self.model}, {len(self.rows)} cell(s)."
        lines = [CPU_LINE if self.cpu else "On the GPU.", head, _header(), *(_line(r) for r in self.rows)]
        return "\n".join([*lines, "", *_summary([r for r in self.rows if not r.skipped])])


def _header() -> str:
    return f"{'cell':<34} {'correct':>7} {'speedup':>8} {'vs compile':>10} {'tokens':>9} {'cost':>8}"


def _line(r: Row) -> str:
    if r.skipped:
        return f"{r.cell[:34]:<34} skipped: {r.skipped}"[:WIDTH]
    return (
        f"{r.cell[:34]:<34} {'yes' if r.correct else 'no':>7} {_x(r.speedup):>8} {_x(r.over_compile):>10}"
        f" {f'{r.tokens:,}' if r.tokens is not None else '–':>9} {f'${r.cost:.3f}' if r.cost is not None else '–':>8}"
    )


def _x(value: float | None) -> str:
    return f"{value:.2f}x" if value is not None else "–"


def _geomean(values: Sequence[float]) -> float | None:
    return math.exp(sum(map(math.log, values)) / len(values)) if values else None


def _summary(rows: Sequence[Row]) -> list[str]:
    if not rows:
        return ["No cell was measured."]
    n = len(rows)
    fast = [sum(r.correct and (r.speedup or 0) > p for r in rows) / n for p in (1.0, 2.0)]
    over = _geomean([r.speedup if r.correct and r.speedup else 1.0 for r in rows])
    compiled = _geomean([r.over_compile for r in rows if r.over_compile])
    tokens = [r.tokens for r in rows if r.tokens is not None]
    costs = [r.cost for r in rows if r.cost is not None]
    return [
        f"correct {sum(r.correct for r in rows) / n:.0%} · fast_1 {fast[0]:.0%} · fast_2 {fast[1]:.0%} of {n} cell(s)",
        f"geomean speedup over the original {_x(over)}, over torch.compile {_x(compiled)} (no correct version: 1.00x)",
        f"tokens per kernel {sum(tokens) / len(tokens):,.0f}" if tokens else "tokens per kernel: not reported",
        f"cost per kernel ${sum(costs) / len(costs):.3f}" if costs else "cost per kernel: unknown (set price_in, price_out)",
    ]


def bench_rewriter(
    cells: Sequence[Path], settings: Settings, *, gpu: bool, on_event: Callable[[Event], None] | None = None
) -> Bench:
    """Run the loop with the LLM rewriter over ``cells``; on the CPU (``gpu`` False) each replays its report."""
    return Bench(tuple(_measured(cell, settings, gpu, on_event) for cell in cells), not gpu, settings.model or "")


def _measured(cell: Path, settings: Settings, gpu: bool, on_event: Callable[[Event], None] | None) -> Row:
    from kernel_lab import api

    name = f"{cell.parent.name}/{cell.name}"
    source, report = cell.read_text(), cell.with_suffix(".ncu-rep")
    if not gpu and language(source) == "cuda":
        return Row(name, skipped="a CUDA cell needs a GPU")
    if not gpu and not report.exists():
        return Row(name, skipped=f"no recorded report {report.name} to replay without a GPU")
    try:
        result = api.optimize(cell, replay=None if gpu else report, rewriter="llm", settings=settings, on_event=on_event)
    except KernelLabError as err:
        return Row(name, skipped=str(err)[: WIDTH - 45])
    versions = result.session.versions[1:]
    correct = any(v.correct and not v.warnings for v in versions)
    best = result.best
    speedup = best.speedup if best is not result.session.original else 1.0
    spent = result.spent
    return Row(
        name,
        correct,
        speedup,
        _over_compile(source, best.source, settings) if REFERENCE.search(source) else None,
        spent.tokens if spent is not None and spent.requests > spent.unreported else None,
        spent.cost if spent is not None else None,
    )


def _over_compile(original: str, best: str, settings: Settings) -> float | None:
    """The best version's speedup over ``torch.compile(torch_reference)``, both judged against the original."""
    from kernel_lab.verify import verify

    compiled = original + "\n\nrun = torch.compile(torch_reference)\n"
    ours, theirs = (verify(original, s, seeds=1, timeout=settings.verify_timeout).timing for s in (best, compiled))
    return ours.speedup / theirs.speedup if ours is not None and theirs is not None else None
