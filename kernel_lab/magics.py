"""IPython magics: ``%%profile``. Parses options, calls :mod:`kernel_lab.api`, shows progress."""
from __future__ import annotations

import argparse
import shlex
import time
from html import escape

from IPython.core.error import UsageError
from IPython.core.magic import Magics, cell_magic, magics_class
from IPython.display import HTML, display
from traitlets import Float, Int, Unicode

from kernel_lab.cli import add_optimize_options, add_profile_options, optimize_kwargs, profile_kwargs
from kernel_lab.frontend import running_cell
from kernel_lab.profiling.ncu import Progress
from kernel_lab.result import Result


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


def _optimize_parser() -> _Parser:
    parser = _Parser(prog="%%optimize", add_help=False)
    add_optimize_options(parser)
    return parser


def _parser() -> _Parser:
    parser = _Parser(prog="%%profile", add_help=False)
    add_profile_options(parser)
    parser.add_argument("--replay", help="diagnose this recorded .ncu-rep instead of running the cell (no GPU needed)")
    parser.add_argument("-o", "--output", help="where to write the report")
    return parser


class _ProgressView:
    """A live HTML line updated in place (works in JupyterLab, Notebook and nbclient)."""

    def __init__(self) -> None:
        self.start = time.monotonic()
        self.handle = display(HTML("<i>Kernel Lab: running the cell under Nsight Compute…</i>"), display_id=True)

    def __call__(self, event: Progress) -> None:
        state = f"{event.passes} passes" if event.passes else f"{event.percent}%"
        self.handle.update(HTML(
            f"Profiling launch {event.number}: <code>{escape(event.kernel)}</code> "
            f"<progress value='{event.percent}' max='100'></progress> {state}"
        ))

    def close(self, text: str) -> None:
        self.handle.update(HTML(f"<i>{escape(text)} ({time.monotonic() - self.start:.1f} s)</i>"))


@magics_class
class KernelLabMagics(Magics):
    """``%%profile [options]``: profile the cell's kernels with Nsight Compute and rank bottlenecks.

    Settings (``%config KernelLabMagics.<name> = value``) give option defaults.
    """

    model = Unicode(None, allow_none=True, help="LLM model for %%optimize (the API key comes from $OPENAI_API_KEY only)").tag(config=True)
    base_url = Unicode(None, allow_none=True, help="OpenAI-compatible server for %%optimize").tag(config=True)
    ncu_path = Unicode(None, allow_none=True, help="path to ncu (default: $KERNEL_LAB_NCU, then PATH)").tag(config=True)
    launch_count = Int(20, help="profile at most this many kernel launches").tag(config=True)
    timeout = Float(600.0, help="stop profiling after this many seconds").tag(config=True)

    @cell_magic
    def profile(self, line: str, cell: str) -> Result:
        """Profile the kernels this cell launches. Run ``%%profile --help`` for options."""
        from kernel_lab import api

        parser = _parser()
        parser.set_defaults(launch_count=self.launch_count, timeout=self.timeout)
        args = parser.parse_line(line)
        if args is None:
            return None
        if args.replay:
            return api.diagnose(args.replay)
        api.preflight(self.ncu_path)
        view = _ProgressView()
        try:
            result = api.profile(cell, output=args.output, ncu_path=self.ncu_path, on_progress=view, **profile_kwargs(args))
        except BaseException:
            view.close("Profiling stopped")
            raise
        view.close(f"Profiled {len(result.profile.kernels)} kernel launch(es)")
        return result

    @cell_magic
    def optimize(self, line: str, cell: str):
        """Rewrite the cell's kernel, verify candidates in a subprocess, keep every version. ``--help`` for options."""
        from kernel_lab import api

        parser = _optimize_parser()
        parser.set_defaults(model=self.model, base_url=self.base_url)
        args = parser.parse_line(line)
        if args is None:
            return None
        if args.replay is None:
            api.preflight(self.ncu_path)
        log = display(HTML("<i>Kernel Lab: optimizing…</i>"), display_id=True)
        lines: list[str] = []

        def on_event(message: str) -> None:
            lines.append(message)
            log.update(HTML("<pre>" + escape("\n".join(lines[-12:])) + "</pre>"))

        result = api.optimize(cell, on_event=on_event, **optimize_kwargs(args))
        result.cell = running_cell()  # lets the panel's Apply put a version into this very cell
        return result
