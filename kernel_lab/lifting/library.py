"""Where a library's kernel lives: the module of this process that holds it, or the module its file would be.

A kernel is known by its name and the file its ``def`` is in (the launch record's); a module loaded from another
copy of the library (another checkout, another machine's install) is recognised by the kernel's source.
"""

from __future__ import annotations

import ast
import inspect
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from kernel_lab.cells import parse

_DEPTH = 4  # wrappers followed to the @triton.jit function (autotune over heuristics over jit)


def jit_function(obj: Any) -> Any:
    """The ``@triton.jit`` function of a kernel object (under ``@triton.autotune``/``@triton.heuristics`` or
    Inductor's launcher, each holding the next as ``.fn``), or None when ``obj`` is no Triton kernel."""
    for _ in range(_DEPTH):
        if obj is None:
            return None
        if hasattr(obj, "arg_names") and hasattr(getattr(obj, "fn", None), "__code__"):
            return obj
        obj = getattr(obj, "fn", None)
    return None


def _shape(source: str) -> str | None:
    """A function's syntax without its decorators, for comparing two copies of a kernel."""
    try:
        fn = parse(textwrap.dedent(source)).body[0]
    except (SyntaxError, IndexError):
        return None
    if not isinstance(fn, ast.FunctionDef):
        return None
    fn.decorator_list = []
    return ast.dump(fn)


def same_kernel(obj: Any, kernel_text: str) -> bool:
    """Whether a kernel object's function has the syntax of ``kernel_text`` (a ``def``)."""
    fn = jit_function(obj)
    try:
        source = inspect.getsource(fn.fn) if fn is not None else None
    except (OSError, TypeError):
        return False
    return source is not None and _shape(source) == _shape(kernel_text)


def constexprs(obj: Any) -> set[str]:
    """The ``tl.constexpr`` parameters of a kernel object (compiled or interpreted: read from its source)."""
    fn = jit_function(obj)
    if fn is None:
        return set()
    params = getattr(fn, "params", None)
    if params is not None:
        return {p.name for p in params if p.is_constexpr}
    tree = parse(textwrap.dedent(inspect.getsource(fn.fn)))
    node = tree.body[0]
    assert isinstance(node, ast.FunctionDef)
    return {a.arg for a in node.args.args if a.annotation is not None and "constexpr" in ast.unparse(a.annotation)}


@dataclass(frozen=True)
class Module:
    """An importable module: its dotted name and the folder to put on ``sys.path`` for it."""

    name: str
    root: str


def loaded(name: str, file: str, kernel_text: str | None) -> ModuleType | None:
    """The module of this process whose attribute ``name`` is kernel ``name`` defined in ``file``, else one whose
    kernel has the same source as ``kernel_text``."""
    same = None
    for module in list(sys.modules.values()):
        obj = getattr(module, "__dict__", {}).get(name)
        fn = jit_function(obj)
        if fn is None or getattr(module, "__name__", "") == "__main__":
            continue
        if fn.fn.__code__.co_filename == file:
            return module
        if same is None and kernel_text is not None and same_kernel(obj, kernel_text):
            same = module
    return same


def of_loaded(module: ModuleType) -> Module | None:
    file = getattr(module, "__file__", None)
    if not file:
        return None
    root = Path(file).resolve().parent
    for _ in range(module.__name__.count(".") + (Path(file).stem == "__init__")):
        root = root.parent
    return Module(module.__name__, str(root))


def of_file(file: str) -> Module | None:
    """The module a file on disk is, by the packages (``__init__.py``) around it; None when it is not there."""
    path = Path(file)
    if not path.is_file() or path.suffix != ".py":
        return None
    parts, folder = [path.stem], path.parent
    while (folder / "__init__.py").is_file():
        parts.insert(0, folder.name)
        folder = folder.parent
    return Module(".".join(parts), str(folder))
