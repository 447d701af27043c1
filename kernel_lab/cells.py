"""Cells: what a notebook cell holds (its kernels, its language) and how one is run.

A cell is plain source text, or the path of a ``.py`` file holding it. Cells that Kernel Lab can
optimize follow a convention: kernels, ``make_inputs()`` and ``run(*inputs)`` (see the README).
"""

from __future__ import annotations

import re
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_TRITON_KERNEL = re.compile(r"@triton\.(?:jit|autotune|heuristics)[^\n]*\n(?:\s*@[^\n]*\n|[^\n]*\)\s*\n)*?\s*def\s+(\w+)")
_CUDA_KERNEL = re.compile(
    r"__global__\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?(?:static\s+)?(?:inline\s+)?void\s+"
    r"(?:__launch_bounds__\s*\([^)]*\)\s*)?(\w+)"
)


@dataclass(frozen=True)
class CellSource:
    """The text of a cell, and the file it came from when it came from one."""

    text: str
    path: Path | None = None

    @classmethod
    def of(cls, cell: str | Path) -> CellSource:
        """``cell`` as source text, or read from the ``.py`` file it names."""
        if isinstance(cell, Path) or (cell.endswith(".py") and "\n" not in cell):
            path = Path(cell).resolve()
            return cls(path.read_text(), path)
        return cls(str(cell))

    @property
    def name(self) -> str:
        """A short name for sessions and messages: the file's stem, else "cell"."""
        return self.path.stem if self.path else "cell"


def kernel_names(source: str) -> list[str]:
    """Names of the Triton (``@triton.jit``) and CUDA (``__global__``) kernels defined in ``source``."""
    names = _TRITON_KERNEL.findall(source) + _CUDA_KERNEL.findall(source)
    return list(dict.fromkeys(names))


def language(source: str) -> str:
    """ "cuda" for a cell with CUDA C++ kernels (``__global__`` / ``load_inline``), else "triton"."""
    return "cuda" if _CUDA_KERNEL.search(source) or "load_inline" in source else "triton"


def execute(source: str, filename: str, namespace: dict[str, Any]) -> dict[str, Any]:
    """Compile ``source`` as ``filename`` and run it in ``namespace`` (the user's own code: that is the point)."""
    exec(compile(source, filename, "exec"), namespace)  # noqa: S102
    return namespace


def user_traceback(exc: BaseException, filename: str) -> str:
    """The traceback from the first frame in ``filename`` (the user's cell) onwards; Kernel Lab's frames go."""
    if isinstance(exc, SyntaxError):
        return "".join(traceback.format_exception_only(type(exc), exc))
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename != filename:
        tb = tb.tb_next
    return "".join(traceback.format_exception(type(exc), exc, tb or exc.__traceback__))


def describe(exc: BaseException, filename: str) -> str:
    """``Type: message at line N`` on one line; N is the last line of ``filename`` in the traceback."""
    if isinstance(exc, SyntaxError):
        text, line = exc.msg, exc.lineno
    else:
        lines = [s.strip() for s in str(exc).splitlines() if s.strip()] or [""]
        text = lines[-1] if re.match(r"at \d+:\d+:", lines[0]) else lines[0]  # Triton: "at 5:13: <source> ... error"
        line, tb = None, exc.__traceback__
        while tb is not None:
            if tb.tb_frame.f_code.co_filename == filename:
                line = tb.tb_lineno
            tb = tb.tb_next
    return f"{type(exc).__name__}: {text[:300]}" + (f" at line {line}" if line else "")
