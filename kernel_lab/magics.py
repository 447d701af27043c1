"""IPython magics ``%%profile`` and ``%%optimize``: parse options, call :mod:`kernel_lab.api`, show progress.

Every setting can be given a notebook-wide default with ``%config KernelLabMagics.<setting> = value``
(``%config KernelLabMagics`` lists them); an option on the magic's line wins over it.
"""

from __future__ import annotations

import argparse
import atexit
import re
import shlex
import time
from dataclasses import fields
from html import escape
from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, cell_magic, magics_class
from IPython.display import HTML, display
from traitlets import Bool, Float, Int, List, TraitType, Unicode

from kernel_lab import options
from kernel_lab.cells import CellSource, check
from kernel_lab.display.html import STYLE
from kernel_lab.display.progress import Progress as OptimizeProgress
from kernel_lab.frontend import running_cell
from kernel_lab.loop import Event
from kernel_lab.models import Profile
from kernel_lab.profiling import Profiler, Progress, live
from kernel_lab.results.optimize import OptimizeResult
from kernel_lab.results.profile import Result
from kernel_lab.settings import Settings


class _Parser(argparse.ArgumentParser):
    """Option errors become IPython UsageErrors (one line, no traceback) naming the magic."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"{self.prog}: {message}. Run {self.prog} --help for the options.")

    def parse_line(self, line: str) -> argparse.Namespace | None:
        """The options of a magic's line; None (after printing the help) for -h/--help."""
        words = shlex.split(line)
        if "--help" in words or "-h" in words:
            print(self.format_help())
            return None
        return self.parse_args(words)


def body_optional(lines: list[str]) -> list[str]:
    """An input transformer: ``%%profile --replay REPORT`` or ``--help`` may stand alone in a cell.

    IPython refuses a cell magic whose body is empty; an empty line below the magic's is a body.
    """
    if len(lines) == 1 and re.match(r"%%(profile|optimize)(\s|$)", lines[0]):
        return [*lines, "\n"]
    return lines


def _profile_parser() -> _Parser:
    parser = _Parser(prog="%%profile", add_help=False)
    options.add(parser, options.PROFILE)
    parser.add_argument("--replay", help="diagnose this recorded .ncu-rep instead of running the cell (no GPU needed)")
    parser.add_argument("--or-replay", help="profile the cell where there is a GPU and ncu, else diagnose this recorded report")
    parser.add_argument("-o", "--output", help="where to write the report")
    return parser


def _optimize_parser() -> _Parser:
    parser = _Parser(prog="%%optimize", add_help=False)
    options.add(parser, options.OPTIMIZE)
    parser.add_argument("--replay", help="diagnose from this recorded report instead of profiling (no GPU; one round)")
    return parser


def _trait(kind: str, help_text: str) -> TraitType:
    """A %config trait for a setting; None (the default) means "not set here"."""
    if kind.startswith("bool"):
        return Bool(None, allow_none=True, help=help_text).tag(config=True)
    if kind.startswith("int"):
        return Int(None, allow_none=True, help=help_text).tag(config=True)
    if kind.startswith("float"):
        return Float(None, allow_none=True, help=help_text).tag(config=True)
    if kind.startswith("tuple"):
        return List(Unicode(), default_value=None, allow_none=True, help=help_text).tag(config=True)
    return Unicode(None, allow_none=True, help=help_text).tag(config=True)


#: one %config trait per setting (the API key is not a setting: it comes from $OPENAI_API_KEY only)
if TYPE_CHECKING:
    from kernel_lab.lifting.table import Workload

    _SettingsTraits = Magics
else:
    _SettingsTraits = type(
        "_SettingsTraits", (Magics,), {f.name: _trait(str(f.type), f.metadata["help"]) for f in fields(Settings)}
    )


class _ProgressView:
    """A live HTML line updated in place (works in JupyterLab, Notebook and nbclient)."""

    def __init__(self, where: str = "in a fresh process") -> None:
        self.start = time.monotonic()
        self.handle = display(
            HTML(f"<i>Kernel Lab: running the cell under Nsight Compute, {escape(where)}…</i>"), display_id=True
        )

    def __call__(self, event: Progress) -> None:
        state = f"{event.passes} passes" if event.passes else f"{event.percent}%"
        self.handle.update(
            HTML(
                f"Profiling launch {event.number}: <code>{escape(event.kernel)}</code> "
                f"<progress value='{event.percent}' max='100'></progress> {state}"
            )
        )

    def close(self, text: str) -> None:
        self.handle.update(HTML(f"<i>{escape(text)} ({time.monotonic() - self.start:.1f} s)</i>"))


@magics_class
class KernelLabMagics(_SettingsTraits):
    """``%%profile`` and ``%%optimize``; settings (``%config KernelLabMagics.<name> = value``) give option defaults."""

    KEPT = 8  # profiles of cells kept, for an %%optimize of the same cell to start from

    def __init__(self, shell: Any = None, **kwargs: Any) -> None:
        super().__init__(shell=shell, **kwargs)
        self._profiled: dict[tuple, Profile] = {}  # (cell, how it was collected) -> its profile
        self._fresh: Profiler | None = None  # profiles in a fresh process; its next process waits, started ahead

    @staticmethod
    def _key(cell: str, settings: Settings) -> tuple:
        """What makes two profiles of a cell the same: its code and how its kernels are collected."""
        return (
            cell.strip(),
            settings.kernel_filter,
            settings.sections,
            settings.section_set,
            settings.launch_count,
            settings.warmup,
        )

    def settings(self, explicit: dict[str, Any]) -> Settings:
        """Explicit options > %config > environment > defaults."""
        config = {f.name: getattr(self, f.name) for f in fields(Settings)}
        return Settings.resolve(explicit, {k: tuple(v) if isinstance(v, list) else v for k, v in config.items()})

    @cell_magic
    def profile(self, line: str, cell: str) -> Result | Workload | None:
        """Profile the kernels this cell launches. Run ``%%profile --help`` for options. With ``--all-kernels``: every
        kernel of the cell's range, as the workload's table of kernels by time (each one can be lifted)."""
        args = _profile_parser().parse_line(line)
        if args is None:
            return None
        result = self._profile(args, cell)
        if not self.settings(options.given(args, options.PROFILE)).all_kernels:  # the line, %config, the environment
            return result
        from kernel_lab.lifting import workload

        return workload(result)

    def _profile(self, args: argparse.Namespace, cell: str) -> Result:
        from kernel_lab import api, profiling
        from kernel_lab.profiling.ncu import preflight

        if args.replay:
            return api.diagnose(args.replay)
        _check(cell, "profile")
        settings = self.settings(options.given(args, options.PROFILE))
        in_place = live.available() and not args.or_replay
        profiler: Profiler
        if in_place:
            profiler = live.LiveProfiler(self.shell.user_ns if self.shell is not None else {})
        else:
            profiler = profiling.or_replay(args.or_replay) if args.or_replay else self._fresh_profiler(settings)
            if not args.or_replay:
                preflight(settings.ncu_path)
        view = _ProgressView("in place, in this kernel" if in_place else "in a fresh process")
        try:
            result = api.profile(cell, output=args.output, on_progress=view, profiler=profiler, settings=settings)
        except BaseException:
            view.close("Profiling stopped")
            raise
        if result.profile.replay:
            view.close(f"Replayed {result.profile.origin}")
        else:
            view.close(f"Profiled {len(result.profile.kernels)} kernel launch(es). {live.status()}")
            self._profiled[self._key(cell, settings)] = result.profile
            while len(self._profiled) > self.KEPT:
                del self._profiled[next(iter(self._profiled))]
            if settings.optimize_ahead:
                api.start_ahead()
        return result

    def _fresh_profiler(self, settings: Settings) -> Profiler:
        """The profiler of fresh processes, kept from one %%profile to the next so that the next one's process is
        started (under ncu, Python, torch and CUDA loaded) while the user reads the hints and edits the cell."""
        from kernel_lab import profiling

        if not settings.profile_ahead:
            if self._fresh is not None:
                profiling.close(self._fresh)
                self._fresh = None
            return profiling.default()
        if self._fresh is None:
            self._fresh = profiling.default(ahead=True)
            atexit.register(profiling.close, self._fresh)
        return self._fresh

    @cell_magic
    def optimize(self, line: str, cell: str) -> OptimizeResult | None:
        """Rewrite the cell's kernel, verify candidates in a subprocess, keep every version. ``--help`` for options."""
        from kernel_lab import api
        from kernel_lab.profiling.ncu import preflight

        args = _optimize_parser().parse_line(line)
        if args is None:
            return None
        _check(cell, "optimize")
        settings = self.settings(options.given(args, options.OPTIMIZE))
        if args.replay is None:
            preflight(settings.ncu_path)
        log = display(HTML("<i>Kernel Lab: optimizing…</i>"), display_id=True)
        progress = OptimizeProgress()

        def on_event(event: Event) -> None:
            progress.add(event)
            log.update(HTML(STYLE + progress.html()))

        known = self._profiled.get(self._key(cell, settings))  # %%profile of this very cell: round 1 starts there
        result = api.optimize(cell, replay=args.replay, on_event=on_event, settings=settings, profile=known)
        log.update(HTML(STYLE + progress.finished()))
        if settings.optimize_ahead and args.replay is None:
            api.start_ahead()
        result.cell = running_cell()  # lets the panel's Apply put a version into this very cell
        return result


def _check(cell: str, magic: str) -> None:
    """The cell's code is there and can run (line numbers as the notebook shows them, under the magic's line)."""
    if not cell.strip():
        replay = ", or diagnose a recorded report: %%profile --replay REPORT" if magic == "profile" else ""
        raise UsageError(f"%%{magic}: the cell has no code. Put the cell's code below the %%{magic} line{replay}.")
    check(CellSource(cell), optimize=magic == "optimize", first_line=2)
