"""Optimize a whole suite of cells on every GPU of this machine, or of a Ray cluster.

    kernel_lab.optimize_suite("kernels/", gpus="all")            # this machine's GPUs
    kernel_lab.optimize_suite("kernels/*.py", ray="auto")          # a running Ray cluster

Every cell is optimized as ``%%optimize`` does it (same rewriters, same judge, a session on disk per cell).
The work is spread with Ray: each cell's loop runs as a CPU task (proposing candidates, asking an LLM), and
every measurement (an ncu profile, a judgement with its timing) is a task that holds one GPU alone, so
measurements never share a GPU while the CPU work of other cells goes on. A lost worker costs only the task
it held: Ray runs it again elsewhere. Every version is on disk as soon as it is judged, and the suite's own
record (``suite.json``) says which cells are done, so running the same suite again resumes where it stopped.
"""

from __future__ import annotations

import glob
import json
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from html import escape
from pathlib import Path
from typing import Any

from kernel_lab.cells import CellSource
from kernel_lab.errors import KernelLabError
from kernel_lab.models import Profile
from kernel_lab.profiling.base import OnProgress, Profiler
from kernel_lab.settings import Settings
from kernel_lab.verify import Verdict
from kernel_lab.verify.judge import JudgeEvents

STATE = "suite.json"
MEASUREMENTS = "measurements.jsonl"  # one line per measuring task: which GPU, when


@dataclass
class CellRun:
    """One cell of a suite: where it stands, and what it came to."""

    cell: str
    status: str = "waiting"  # waiting, running, done, failed
    session: str | None = None
    original_ms: float | None = None
    best_ms: float | None = None
    speedup: float | None = None
    best: str | None = None  # the best version's label
    roof: str | None = None  # "at 87% of the DRAM roof", when the best version was profiled
    rounds: int = 0
    wall_s: float | None = None
    gpus: list[str] = field(default_factory=list)  # GPUs its measurements ran on
    stopped: str = ""
    error: str | None = None


@dataclass
class SuiteReport:
    """The suite's table: text in a terminal, HTML in a notebook, JSON for other tools."""

    folder: Path
    cells: list[CellRun]
    wall_s: float = 0.0
    notes: list[str] = field(default_factory=list)

    def to_json(self, **kwargs: Any) -> str:
        return json.dumps(
            {"folder": str(self.folder), "wall_s": self.wall_s, "notes": self.notes, "cells": [asdict(c) for c in self.cells]},
            **kwargs,
        )

    def _rows(self) -> list[list[str]]:
        def ms(v: float | None) -> str:
            return f"{v:.3f}" if v is not None else "–"

        return [
            [
                c.cell,
                c.status,
                ms(c.original_ms),
                ms(c.best_ms),
                f"{c.speedup:.2f}x" if c.speedup else "–",
                c.roof or "–",
                str(c.rounds),
                f"{c.wall_s:.0f}" if c.wall_s is not None else "–",
                ",".join(c.gpus) or "–",
            ]
            for c in self.cells
        ]

    HEADER = ("cell", "status", "original ms", "best ms", "speedup", "roof of best", "rounds", "wall s", "GPUs")

    def __str__(self) -> str:
        rows = [list(self.HEADER), *self._rows()]
        widths = [max(len(r[i]) for r in rows) for i in range(len(self.HEADER))]
        lines = [f"Kernel Lab suite: {len(self.cells)} cells in {self.folder} ({self.wall_s:.0f} s)"]
        lines += [f"! {n}" for n in self.notes]
        lines += ["  ".join(v.ljust(w) for v, w in zip(r, widths)) for r in rows]
        lines += [f"{c.cell}: {c.error}" for c in self.cells if c.error]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        head = "".join(f"<th>{escape(h)}</th>" for h in self.HEADER)
        body = "".join("<tr>" + "".join(f"<td>{escape(v)}</td>" for v in r) + "</tr>" for r in self._rows())
        notes = "".join(f"<div class='note'>{escape(n)}</div>" for n in self.notes)
        return (
            f"<div class='kl'><b>Kernel Lab suite</b>: {len(self.cells)} cells in <code>{escape(str(self.folder))}</code>"
            f" ({self.wall_s:.0f} s){notes}<table><tr>{head}</tr>{body}</table></div>"
        )


def cells_of(spec: str | Path | Sequence[str | Path]) -> list[Path]:
    """The cell files a suite names: a folder (its ``*.py``), a glob, or a list of files."""
    if isinstance(spec, (str, Path)):
        path = Path(spec)
        found = sorted(path.glob("*.py")) if path.is_dir() else sorted(Path(p) for p in glob.glob(str(spec)))
    else:
        found = [Path(p) for p in spec]
    found = [p.resolve() for p in found if p.name != "__init__.py"]
    if not found:
        raise KernelLabError(f"No cells in {spec}.", fix="Name a folder of .py cells, a glob such as 'kernels/*.py', or files.")
    return found


# --- measurements, each a task that holds one GPU ---------------------------------------------------------


def _measured(folder: str, what: str, started: float) -> list[str]:
    """Record which GPU a measurement held, and when (the suite's measurements.jsonl)."""
    import ray

    gpus = [str(g) for g in ray.get_gpu_ids()]
    with open(Path(folder) / MEASUREMENTS, "a") as log:
        log.write(json.dumps({"what": what, "gpus": gpus, "start": started, "end": time.time(), "pid": os.getpid()}) + "\n")
    return gpus


def _profile_task(
    profiler: Profiler, cell: CellSource, settings: Settings, output: str | None, folder: str
) -> tuple[Profile, list[str]]:
    started = time.time()
    profile = profiler.collect(cell, settings, None, Path(output) if output else None)
    return profile, _measured(folder, "profile", started)


def _judge_task(reference: str, settings: Settings, sources: list[str], folder: str) -> tuple[list[Verdict], list[str]]:
    from kernel_lab.profiling.ncu import has_gpu
    from kernel_lab.verify import Judge, Options

    started = time.time()
    with Judge(reference, Options.of(settings), None if has_gpu() else "cpu") as judge:
        verdicts = judge.check_many(sources)
    return verdicts, _measured(folder, "judge", started)


class RemoteProfiler:
    """A profiler whose every profile is a Ray task holding one GPU."""

    def __init__(self, inner: Profiler, remote: Any, folder: str, gpus: list[str]) -> None:
        self.inner, self.remote, self.folder, self.gpus = inner, remote, folder, gpus
        self.name = inner.name
        self.profiles_cells = inner.profiles_cells

    def collect(
        self, cell: CellSource, settings: Settings, on_progress: OnProgress | None = None, output: Path | None = None
    ) -> Profile:
        import ray

        profile, gpus = ray.get(self.remote.remote(self.inner, cell, settings, str(output) if output else None, self.folder))
        self.gpus.extend(g for g in gpus if g not in self.gpus)
        return profile


class RemoteJudge:
    """A judge whose every round is a Ray task holding one GPU (the reference is prepared there each round)."""

    def __init__(self, reference: str, settings: Settings, remote: Any, folder: str, gpus: list[str]) -> None:
        self.reference, self.settings, self.remote, self.folder, self.gpus = reference, settings, remote, folder, gpus

    def refused(self) -> Verdict | None:
        """Nothing is known here before the first round (the reference is judged on a GPU elsewhere)."""
        return None

    def check_many(self, sources: list[str], on_event: JudgeEvents | None = None) -> list[Verdict]:
        import ray

        for i in range(len(sources)):
            if on_event is not None:
                on_event(i, "checking")
        verdicts, gpus = ray.get(self.remote.remote(self.reference, self.settings, sources, self.folder))
        self.gpus.extend(g for g in gpus if g not in self.gpus)
        for i in range(len(sources)):
            if on_event is not None:
                on_event(i, "done")
        return verdicts


# --- one cell, as a CPU task ------------------------------------------------------------------------------


def _cell_task(
    path: str, settings: Settings, replay: str | None, folder: str, remotes: tuple[Any, Any], state: Any
) -> dict[str, Any]:
    """Optimize one cell (the loop runs here, on a CPU; measurements go to GPU tasks)."""
    from kernel_lab import api, loop, profiling
    from kernel_lab.profiling.replay import ReplayProfiler
    from kernel_lab.rewrite import make

    started = time.time()
    name = Path(path).stem
    state.update.remote(name, status="running")
    source = CellSource.of(Path(path))
    gpus: list[str] = []
    inner = ReplayProfiler(replay) if replay else profiling.default()
    chosen = settings.but(root=str(Path(folder) / "sessions"))

    def progress(event: loop.Event) -> None:
        if event.state == "verified":
            state.update.remote(name, best=event.best, rounds=event.round)

    run = api.optimize(
        source.text if source.path is None else source.path,
        settings=chosen,
        profiler=RemoteProfiler(inner, remotes[0], folder, gpus),
        rewriter=make(chosen.rewriter_name, chosen),
        judge=RemoteJudge(source.text, chosen, remotes[1], folder, gpus),
        on_event=progress,
    )
    s = run.session
    best = s.best()
    rounds = len({v.parent for v in s.versions[1:] if v.parent is not None})
    result = {
        "cell": name,
        "status": "done",
        "session": str(s.path),
        "original_ms": best.reference_ms if best is not s.original else s.original.time_ms,  # timed beside best
        "best_ms": best.time_ms if best is not s.original else s.original.time_ms,
        "speedup": best.speedup if best is not s.original else 1.0,
        "best": best.label,
        "roof": _roof(s, best),
        "rounds": rounds,
        "wall_s": time.time() - started,
        "gpus": gpus,
        "stopped": run.stopped,
    }
    state.update.remote(name, **{k: v for k, v in result.items() if k != "cell"})
    return result


def _roof(session: Any, best: Any) -> str | None:
    report = session.folder(best) / "profile.ncu-rep"
    if not report.exists():
        return None
    from kernel_lab import api

    result = api.diagnose(report)
    return result.rooflines[0].label() if result.rooflines else None


class _State:
    """A Ray actor holding every cell's state, for progress while the suite runs."""

    def __init__(self, cells: dict[str, dict[str, Any]]) -> None:
        self.cells = cells

    def update(self, cell: str, **fields: Any) -> None:
        self.cells.setdefault(cell, {}).update(fields)

    def snapshot(self) -> dict[str, dict[str, Any]]:
        return self.cells


# --- the suite ----------------------------------------------------------------------------------------------


def optimize_suite(
    cells: str | Path | Sequence[str | Path],
    *,
    gpus: int | str | None = None,
    ray_address: str | None = None,
    replay: str | Path | None = None,
    folder: str | Path | None = None,
    fresh: bool = False,
    settings: Settings | None = None,
    on_progress: Callable[[dict[str, dict[str, Any]]], None] | None = None,
    **options: Any,
) -> SuiteReport:
    """Optimize every cell of a suite, spread over GPUs with Ray; resumes a suite that stopped (``fresh``: not).

    ``gpus``: how many of this machine's GPUs ("all": every one Ray finds); ``ray_address``: a Ray cluster
    ("auto" for the one this machine belongs to) instead of a local instance; ``replay``: diagnose every cell
    from this recorded report (no GPU needed, one round); ``folder``: where the suite keeps its sessions and
    record (default ``<root>/suite-<name>``); ``options``: settings, as for ``kernel_lab.optimize``.
    ``on_progress`` gets every cell's state (status, best so far) as it changes.
    """
    import ray

    paths = cells_of(cells)
    chosen = (settings or Settings.resolve()).but(**{k: v for k, v in options.items() if v is not None})
    name = Path(str(cells)).name.replace("*", "").strip(".") if isinstance(cells, (str, Path)) else "cells"
    where = Path(folder) if folder else Path(chosen.root) / f"suite-{name or 'cells'}"
    where.mkdir(parents=True, exist_ok=True)
    record = where / STATE
    previous = {} if fresh or not record.exists() else json.loads(record.read_text())
    rows = {
        p.stem: CellRun(**previous[p.stem]) if previous.get(p.stem, {}).get("status") == "done" else CellRun(p.stem)
        for p in paths
    }
    started = time.time()
    if not ray.is_initialized():
        if ray_address:
            ray.init(address=ray_address, log_to_driver=False)
        else:
            ray.init(num_gpus=None if gpus in (None, "all") else int(gpus), include_dashboard=False, log_to_driver=False)
    notes = []
    if not ray.cluster_resources().get("GPU"):
        notes.append("Ray sees no GPU: measurements run on CPU workers (Triton's CPU interpreter), so their times are CPU times.")
    profile_task = ray.remote(num_gpus=1 if ray.cluster_resources().get("GPU") else 0, max_retries=3)(_profile_task)
    judge_task = ray.remote(num_gpus=1 if ray.cluster_resources().get("GPU") else 0, max_retries=3)(_judge_task)
    cell_task = ray.remote(num_cpus=1, max_retries=1)(_cell_task)
    state: Any = ray.remote(num_cpus=0)(_State).remote({n: asdict(r) for n, r in rows.items()})
    pending = {
        cell_task.remote(str(p), chosen, str(replay) if replay else None, str(where), (profile_task, judge_task), state): p.stem
        for p in paths
        if rows[p.stem].status != "done"
    }
    while pending:
        ready, _ = ray.wait(list(pending), timeout=2.0)
        for ref in ready:
            cell = pending.pop(ref)
            try:
                rows[cell] = CellRun(**ray.get(ref))
            except Exception as exc:  # noqa: BLE001 - one cell's failure is that cell's row, not the suite's end
                rows[cell] = CellRun(cell, status="failed", error=str(exc).strip().splitlines()[-1][:300])
            record.write_text(json.dumps({n: asdict(r) for n, r in rows.items()}, indent=1))
        if on_progress is not None:
            on_progress(ray.get(state.snapshot.remote()))
    record.write_text(json.dumps({n: asdict(r) for n, r in rows.items()}, indent=1))
    resumed = [n for n, r in rows.items() if previous.get(n, {}).get("status") == "done"]
    if resumed:
        notes.append(f"Resumed: {len(resumed)} cell(s) were done in an earlier run ({', '.join(resumed)}).")
    return SuiteReport(where, [rows[p.stem] for p in paths], time.time() - started, notes)
