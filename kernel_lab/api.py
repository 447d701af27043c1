"""The public API the magics, the CLI and the course call: profile, diagnose, analyze, compare, optimize, lift.

Options are :class:`~kernel_lab.settings.Settings` fields, given as keywords (``launch_count=5``) or as
a ``settings`` object; what is not given comes from the environment and the defaults.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kernel_lab import profiling
from kernel_lab.analysis import conductor
from kernel_lab.analysis.compare import compare as compare_diagnoses
from kernel_lab.cells import CellSource, check
from kernel_lab.errors import KernelLabError
from kernel_lab.loop import Event, Parts
from kernel_lab.models import Profile
from kernel_lab.profiling import OnProgress, Profiler
from kernel_lab.profiling.replay import ReplayProfiler
from kernel_lab.profiling.replay import load as load_recorded
from kernel_lab.results.compare import Comparison
from kernel_lab.results.optimize import OptimizeResult
from kernel_lab.results.profile import Result
from kernel_lab.rewrite.base import Rewriter
from kernel_lab.settings import Settings
from kernel_lab.verify.judge import Judging

if TYPE_CHECKING:
    from kernel_lab.lifting import Lifted

CPU_NOTE = "No GPU: candidates were checked with Triton's CPU interpreter; their times are CPU times, not GPU times."


def settings_of(settings: Settings | None, options: dict[str, Any]) -> Settings:
    """``settings`` (else the environment and defaults) with the explicit ``options`` on top."""
    base = settings or Settings.resolve()
    given = {k: v for k, v in options.items() if v is not None}
    return base.but(**given) if given else base


def analyze(profile: Profile) -> Result:
    """Run the conductor over a profile."""
    return Result(profile, tuple(conductor.diagnose(profile)))


def diagnose(path: str | Path) -> Result:
    """Diagnose a recorded ``.ncu-rep`` report (or a torch.profiler ``.json`` trace); no GPU needed."""
    return analyze(load_recorded(path))


def compare(before: Result | str | Path, after: Result | str | Path, kernel: str | None = None) -> Comparison:
    """Before/after of a kernel in two results or reports (``kernel``: its name; default the first)."""
    pick = []
    for side in (before, after):
        result = side if isinstance(side, Result) else diagnose(side)
        matches = [d for d in result.diagnoses if kernel is None or d.kernel.name == kernel]
        if not matches:
            raise KernelLabError(
                f"No kernel named {kernel!r} in {result.profile.origin}.",
                fix="Kernels there: " + ", ".join(d.kernel.name for d in result.diagnoses) + ".",
            )
        pick.append(matches[0])
    return Comparison.of(compare_diagnoses(pick[0], pick[1]))


def lift(result: Any, kernel: str | None = None, *, launch: int = 0) -> Lifted:
    """Lift a kernel that a profiled library call or compiled model launched into a self-contained cell.

    ``result``: what ``%%profile`` or :func:`profile` returned (or a recorded report's path): its report holds the
    kernel's source, and the launch record beside it the launch (shapes, dtypes, strides, scalars, grid).
    ``kernel``: its name (default: the longest Triton kernel recorded); ``launch``: which of its launches (0: the
    first). The cell's ``reference`` runs the original kernel; ``kernel_lab.lifting.put_back`` puts a faster version
    back where the model launches it.
    """
    from kernel_lab.lifting import lift as lift_kernel

    return lift_kernel(result, kernel, launch)


def profile(
    cell: str | Path,
    *,
    output: str | Path | None = None,
    on_progress: OnProgress | None = None,
    profiler: Profiler | None = None,
    settings: Settings | None = None,
    **options: Any,
) -> Result:
    """Profile the kernels of a cell (source text, or a path to a ``.py`` file) and diagnose them.

    By default the cell runs in a fresh process under Nsight Compute, warmed up first, and only the
    kernels it defines are profiled (a torch.profiler trace stands in when counters are refused).
    ``output``: where the report is written (a temporary folder by default). ``options``: settings
    such as ``kernels``, ``sections``, ``launch_count``, ``timeout``.
    """
    chosen = settings_of(settings, options)
    source = CellSource.of(cell)
    check(source)
    found = (profiler or profiling.default()).collect(source, chosen, on_progress, Path(output) if output else None)
    return analyze(found)


def optimize(
    cell: str | Path,
    *,
    replay: str | Path | None = None,
    profiler: Profiler | None = None,
    rewriter: str | Rewriter | None = None,
    on_event: Callable[[Event], None] | None = None,
    settings: Settings | None = None,
    profile: Profile | None = None,
    judge: Judging | None = None,
    **options: Any,
) -> OptimizeResult:
    """Take a cell (source text or a ``.py`` path) to a faster, verified version; every version is kept.

    ``replay``: diagnose from this recorded report instead of profiling (no GPU needed; one round).
    ``rewriter``: a name ("search", "llm", a plug-in's; default llm when a model is configured, else search)
    or a Rewriter. ``options``: settings such as ``rounds``, ``candidates``, ``model``, ``time_budget``,
    ``root``. ``on_event`` gets progress events. ``profile``: a profile of this very cell, taken with the
    same settings (what ``%%profile`` just gave): the first round starts from it instead of profiling again.
    ``judge``: who judges (a suite's judge on a GPU elsewhere); by default a judge here, with the screen.
    """
    from kernel_lab import loop
    from kernel_lab.profiling.ncu import has_gpu
    from kernel_lab.rewrite import make

    chosen = settings_of(settings, {**options, "rewriter": rewriter if isinstance(rewriter, str) else None})
    source = CellSource.of(cell)
    gpu = has_gpu() if judge is None else True
    check(source, optimize=True, gpu=gpu)
    notes = []
    if replay is not None:
        profiler = ReplayProfiler(replay)
        notes.append(f"Replay mode: the diagnosis comes from the recorded report {replay}, not from profiling this cell.")
    if not gpu:
        notes.append(CPU_NOTE)

    def say(message: str) -> None:
        if on_event is not None:
            on_event(Event(message))

    chosen_rewriter = (
        rewriter if rewriter is not None and not isinstance(rewriter, str) else make(chosen.rewriter_name, chosen, say)
    )
    profiler = profiler or profiling.default(ahead=True)
    first = profile if profile is not None and not profile.replay and replay is None else None
    listen = on_event or (lambda event: None)
    parts = loop.Parts(profiler, chosen_rewriter, judge, say=listen, first=first, interpreted=not gpu)
    try:
        with _local_judging(source, chosen, None if gpu else "cpu", parts) if judge is None else nullcontext(parts) as ready:
            run = loop.optimize(source, chosen, ready, notes=tuple(notes))
    finally:
        profiling.close(profiler)
    return OptimizeResult.of(run)


@contextmanager
def _local_judging(source: CellSource, settings: Settings, device: str | None, parts: Parts) -> Iterator[Parts]:
    """The parts with a judge here and the screen: the reference's process and the screen's warm workers live for the
    session and start now, loading Python, torch and the cell while the first version is profiled (nothing of
    theirs runs on the GPU yet). With a first profile there is nothing to profile now: the reference's results are
    made at once, an input set at a time, and the screen's timings go between them."""
    from dataclasses import replace

    from kernel_lab.rewrite.base import Exploring, Working
    from kernel_lab.verify import Judge, Options
    from kernel_lab.verify.judge import import_torch_soon
    from kernel_lab.verify.screen import Screener

    with (
        Judge(source.text, Options.of(settings), device, keep_spares=settings.optimize_ahead) as judge,
        Screener(source.text, settings, device) as screen,
    ):
        judge.start(prepare=parts.first is not None)
        screen.quiet = judge.quiet
        explores = isinstance(parts.rewriter, (Exploring, Working)) and settings.screen > 0
        if explores:
            screen.start()
        import_torch_soon()  # while the first version is profiled (after %%profile: start_ahead did)
        yield replace(parts, judge=judge, screen=screen if explores else None)


def start_ahead() -> None:
    """On a GPU machine, start the processes the next :func:`optimize` screens and judges in (the screen's workers,
    a reference's, a round's candidates': Python, torch, Triton and the profiler load in them; none holds a cell or a
    CUDA context until used, and each is used once), and import torch here, where the judge needs it.
    The notebook calls this after ``%%profile`` and ``%%optimize`` (setting ``optimize_ahead``)."""
    from kernel_lab.profiling.ncu import has_gpu
    from kernel_lab.verify import judge, screen, workers

    if has_gpu():
        wanted = {(workers.SCREEN, "screen"): screen.count(None), (workers.SANDBOX, "reference"): 1}
        workers.ahead(wanted | {(workers.SANDBOX, "candidate"): judge.parallel()}, None)
        judge.import_torch_soon()
