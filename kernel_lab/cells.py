"""Cells: what a notebook cell holds (its kernels, its language) and how one is run.

A cell is plain source text, or the path of a ``.py`` file holding it. Cells that Kernel Lab can
optimize follow a convention: kernels, ``make_inputs()`` and ``run(*inputs)`` (see the README).
"""

from __future__ import annotations

import ast
import re
import threading
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kernel_lab.errors import InvalidCellError
from kernel_lab.interpreter import cannot_run

_TRITON_KERNEL = re.compile(r"@triton\.(?:jit|autotune|heuristics)[^\n]*\n(?:\s*@[^\n]*\n|[^\n]*\)\s*\n)*?\s*def\s+(\w+)")
_WRAPPED_KERNEL = re.compile(r"^(\w+)\s*=\s*triton\.jit\(\s*\1\s*\)", re.M)  # f = triton.jit(f), as Unsloth writes
_CUDA_KERNEL = re.compile(
    r"__global__\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?(?:static\s+)?(?:inline\s+)?void\s+"
    r"(?:__launch_bounds__\s*\([^)]*\)\s*)?(\w+)"
)
_ON_CUDA = re.compile(r"""["']cuda(?::\d+)?["']|\.cuda\(""")  # device="cuda", torch.device('cuda:0'), x.cuda()
CONVENTION = "make_inputs()", "run(*inputs)"
_BF16_IN_KERNEL = re.compile(r"tl\.bfloat16")  # a kernel computing in bf16 (a bf16 tensor is refused when made)


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
            if path.is_dir():
                raise InvalidCellError(f"{cell} is a directory, not a cell.", fix="Give the cell's .py file.")
            if not path.is_file():
                raise InvalidCellError(f"No such file: {cell}.", fix="Check the path (relative to the current directory).")
            return cls(path.read_text(), path)
        return cls(str(cell))

    @property
    def name(self) -> str:
        """A short name for sessions and messages: the file's stem, else "cell"."""
        return self.path.stem if self.path else "cell"


_PARSING = threading.Lock()


def parse(source: str) -> ast.Module:
    """``ast.parse``, one thread at a time: Python 3.11's parser fails ("AST constructor recursion depth mismatch")
    when threads parse at once, as the judge's and the agent's threads do (seen in the suite on 3.11.7)."""
    with _PARSING:
        return ast.parse(source)


def kernel_names(source: str) -> list[str]:
    """Names of the Triton (``@triton.jit``) and CUDA (``__global__``) kernels defined in ``source``."""
    names = _TRITON_KERNEL.findall(source) + _WRAPPED_KERNEL.findall(source) + _CUDA_KERNEL.findall(source)
    return list(dict.fromkeys(names))


def check(cell: CellSource, *, optimize: bool = False, gpu: bool = True, first_line: int = 1) -> None:
    """Raise :class:`InvalidCellError` (one line) when the cell cannot run as written, before anything runs it.

    Always its syntax; with ``optimize``, the ``make_inputs()``/``run(*inputs)`` convention and, without a
    ``gpu``, whether it can run on the CPU at all. ``first_line``: its first line's number as the user sees it
    (2 under a ``%%magic`` line).
    """
    name = cell.path.name if cell.path else "The cell"
    try:
        tree = parse(cell.text)
    except SyntaxError as exc:
        line = (exc.lineno or 1) + first_line - 1
        where = f"{cell.path.name} line {line}" if cell.path else f"Line {line} of the cell"
        raise InvalidCellError(f"{where}: syntax error ({exc.msg}).", fix="Fix the cell and run it again.") from None
    if not optimize:
        return
    names = _bound(tree)
    missing = [f for f in CONVENTION if f.split("(")[0] not in names]
    if missing and "*" not in names:
        raise InvalidCellError(
            f"{name} defines no {' and no '.join(missing)}, so its versions cannot be checked or timed.",
            fix="A cell to optimize defines make_inputs(), which returns the kernel's inputs, and run(*inputs), which "
            "launches the kernel and returns its output.",
        )
    if gpu:
        return
    if language(cell.text) == "cuda":
        raise InvalidCellError(
            f"{name} has CUDA C++ kernels, which need an NVIDIA GPU: there is none here, so no version can be checked.",
            fix="Optimize it on a GPU machine (without one, only Triton cells run, on Triton's CPU interpreter).",
        )
    if _BF16_IN_KERNEL.search(cell.text):  # github.com/triton-lang/triton/issues/11584: "we just don't support it yet"
        raise InvalidCellError(
            f"{name} uses bfloat16, which Triton's CPU interpreter computes wrongly (on the raw bits): there is no GPU "
            "here, so no version can be checked.",
            fix="Optimize it on a GPU machine.",
        )
    if _ON_CUDA.search(cell.text) and "is_available" not in cell.text:
        raise InvalidCellError(
            f'{name} puts its tensors on "cuda" and there is no GPU here, so no version can be checked.',
            fix='Choose the device in the cell (DEVICE = "cuda" if torch.cuda.is_available() else "cpu": the CPU runs '
            "Triton's interpreter), or optimize it on a GPU machine.",
        )


def _bound(tree: ast.Module) -> set[str]:
    """The names a module binds outside its functions and classes ("*" for a star import)."""
    names: set[str] = set()
    todo: list[ast.AST] = [tree]
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        todo.extend(ast.iter_child_nodes(node))
    return names


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
    at = f" at line {line}" if line else ""
    if (said := cannot_run(exc)) is not None:
        return said + at
    return f"{type(exc).__name__}: {text[:300]}{at}"
