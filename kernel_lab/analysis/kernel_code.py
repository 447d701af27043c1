"""A Triton kernel's own source: its function, found by name in the sources the report imported (else on disk)."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from functools import lru_cache

from kernel_lab.analysis.source import file_lines, toolchain
from kernel_lab.cells import parse
from kernel_lab.models import Kernel, LaunchRecord


@dataclass(frozen=True)
class KernelCode:
    """The function of one kernel and the file it is in."""

    file: str
    fn: ast.FunctionDef
    lines: tuple[str, ...]

    def text(self, line: int) -> str:
        """The line's text, stripped ('' outside the file)."""
        return self.lines[line - 1].strip() if 0 < line <= len(self.lines) else ""

    @property
    def params(self) -> tuple[str, ...]:
        return tuple(a.arg for a in self.fn.args.args)


@lru_cache(maxsize=64)
def _tree(text: str) -> ast.Module | None:
    try:
        return parse(text)
    except (SyntaxError, ValueError):
        return None


@lru_cache(maxsize=256)
def _defs(text: str, name: str) -> tuple[ast.FunctionDef, ...]:
    tree = _tree(text)
    return tuple(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == name) if tree else ()


def _text(kernel: Kernel, file: str) -> str:
    content = kernel.source_files.get(file)
    return content if content is not None else "\n".join(file_lines(file))


def find(kernel: Kernel, launch: LaunchRecord | None = None) -> KernelCode | None:
    """The function of ``kernel``: in the file its launch names (nearest the launch's line), else in the first of
    the kernel's own source files that defines a function of its name (a launch recorded in another checkout names
    another path); None when no source has it."""
    own = [f for f in kernel.source_files if not toolchain(f)]
    files = [launch.file, *(f for f in own if f != launch.file)] if launch is not None else own
    name = launch.kernel if launch is not None else kernel.name
    for file in files:
        text = _text(kernel, file)
        found = _defs(text, name)
        if found:
            line = launch.line if launch is not None else 0
            fn = min(found, key=lambda d: abs(min([d.lineno, *(x.lineno for x in d.decorator_list)]) - line))
            return KernelCode(file, fn, tuple(text.splitlines()))
    return None


def from_text(text: str, name: str, file: str = "cell.py") -> KernelCode | None:
    """The function ``name`` of a source text (a cell's), or None when it has none."""
    found = _defs(text, name)
    return KernelCode(file, found[0], tuple(text.splitlines())) if found else None


def numbers(launch: LaunchRecord | None) -> dict[str, float]:
    """The numbers a launch passed its kernel, by argument (row lengths, strides, block sizes); booleans left out."""
    if launch is None:
        return {}
    return {name: float(v) for name, v in launch.args if isinstance(v, (int, float)) and not isinstance(v, bool)}
