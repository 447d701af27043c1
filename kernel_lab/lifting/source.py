"""A kernel's source, found where the profiled run left it, and cut out of its file with what it needs.

The report holds the files Nsight Compute imported (``Kernel.source_files``: the library's module, the file
``torch.compile`` wrote); the launch record names the file and line of the kernel's ``def``. :func:`find` takes
the report's copy first (what was profiled), then the file on disk. :func:`extract` keeps the kernel's ``def``
(its decorators replaced by ``@triton.jit``: the launch record holds the configuration an autotuner or
Inductor chose) and the module-level statements it needs, followed name by name: imports, constants, helper
``@triton.jit`` functions. :func:`written` tells which pointer arguments the kernel stores to.
"""

from __future__ import annotations

import ast
import builtins
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from kernel_lab.cells import parse

#: the imports every lifted cell starts with (a module's own copy of them is not repeated)
HEADER_IMPORTS = ("import torch", "import triton", "import triton.language as tl")
_STORES = re.compile(r"(^|\.)(store|atomic_\w+)$")


@dataclass(frozen=True)
class KernelSource:
    """The text of the file a kernel is defined in, and where that text came from."""

    name: str
    file: str  # the file's path as the report or the record names it
    text: str
    where: str  # "report" (the copy Nsight Compute imported) or "disk"

    def describe(self) -> str:
        return f"{self.file} ({'as the report holds it' if self.where == 'report' else 'read from disk'})"


def defines(text: str, name: str) -> bool:
    return re.search(rf"^\s*def\s+{re.escape(name)}\s*\(", text, re.M) is not None


def find(name: str, file: str, sources: Iterable[Mapping[str, str]]) -> KernelSource | None:
    """Where kernel ``name`` (recorded as defined in ``file``) has its source: the report's copy of ``file``, else
    another file of the report that defines it (Triton reuses a binary compiled from an identical kernel's text
    elsewhere), else ``file`` on disk; None when none has it."""
    files: dict[str, str] = {}
    for found in sources:
        files.update(found)
    if file in files and defines(files[file], name):
        return KernelSource(name, file, files[file], "report")
    for path, text in files.items():
        if defines(text, name) and "/triton/language/" not in path:
            return KernelSource(name, path, text, "report")
    try:
        text = Path(file).read_text()
    except (OSError, UnicodeDecodeError):
        return None
    return KernelSource(name, file, text, "disk") if defines(text, name) else None


def _names(node: ast.AST) -> set[str]:
    """Names a node reads (``a`` of ``a.b.c`` too)."""
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _binds(node: ast.stmt) -> set[str]:
    """The module-level names a top-level statement binds (inside ``try``/``if``/``with`` blocks too)."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {node.name}
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return {(a.asname or a.name).split(".")[0] for a in node.names}
    if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    blocks = [getattr(node, field, []) for field in ("body", "orelse", "finalbody")]
    blocks += [handler.body for handler in getattr(node, "handlers", [])]
    return set().union(set(), *(_binds(child) for block in blocks for child in block))


def _locals(fn: ast.FunctionDef) -> set[str]:
    params = {a.arg for a in [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]}
    stored = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    return params | stored


def _needs(node: ast.stmt, decorators: bool = True) -> set[str]:
    """The global names a statement reads (a function's locals and parameters are its own); ``decorators``: with
    what its decorators read."""
    if isinstance(node, ast.FunctionDef):
        body = set().union(*(_names(s) for s in node.body)) - _locals(node)
        return body | set().union(*(_names(d) for d in node.decorator_list)) if decorators else body
    return _names(node)


def kernel_def(tree: ast.Module, name: str) -> ast.FunctionDef | None:
    return next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name), None)


@dataclass(frozen=True)
class Extracted:
    """The kernel's ``def`` as a cell holds it and the module-level statements it needs, in their file's order."""

    helpers: str
    kernel: str
    dropped: tuple[str, ...]  # the decorators replaced by @triton.jit, as written
    unresolved: tuple[str, ...]  # global names no statement of the file binds (and not builtins)


def extract(text: str, name: str, package: str | None = None, drop: tuple[str, ...] = ()) -> Extracted:
    """Kernel ``name`` of a module's ``text`` and what it needs from the module (see the module docstring).
    ``package``: the module's package, to make its relative imports absolute; ``drop``: statements left out."""
    tree = parse(text)
    fn = kernel_def(tree, name)
    if fn is None:
        raise ValueError(f"no def {name} in the text")
    binders: dict[str, list[ast.stmt]] = {}
    for stmt in tree.body:
        if stmt is fn or _rebinds(stmt, name):
            continue
        for bound in _binds(stmt):
            binders.setdefault(bound, []).append(stmt)
    wanted: list[ast.stmt] = []
    todo, seen, unresolved = list(_needs(fn, decorators=False)), set(), set()
    while todo:
        needed = todo.pop()
        if needed in seen:
            continue
        seen.add(needed)
        if needed not in binders:
            if not hasattr(builtins, needed):
                unresolved.add(needed)
            continue
        for stmt in binders[needed]:
            if stmt not in wanted:
                wanted.append(stmt)
                todo.extend(_needs(stmt))
    helpers, last = "", -1
    for stmt in sorted(wanted, key=lambda s: s.lineno):
        segment = _segment(text, stmt, package)
        if segment.strip() in HEADER_IMPORTS or segment.strip() in drop:
            continue
        first = min([stmt.lineno, *(d.lineno for d in getattr(stmt, "decorator_list", []))])
        helpers += ("" if not helpers else "\n" if first == last + 1 else "\n\n\n") + segment
        last = stmt.end_lineno or stmt.lineno
    body = ast.get_source_segment(text, fn) or ""
    dropped = tuple(ast.get_source_segment(text, d) or "" for d in fn.decorator_list)
    return Extracted(helpers + "\n" if helpers else "", "@triton.jit\n" + body, dropped, tuple(sorted(unresolved)))


def _rebinds(stmt: ast.stmt, name: str) -> bool:
    """``name = triton.jit(name)`` and the like: the kernel wrapped by a call, which the cell's ``@triton.jit`` does."""
    return (
        isinstance(stmt, ast.Assign)
        and [ast.unparse(t) for t in stmt.targets] == [name]
        and isinstance(stmt.value, ast.Call)
        and name in _names(stmt.value)
    )


def _segment(text: str, stmt: ast.stmt, package: str | None) -> str:
    """A statement's text; a relative import made absolute when the package is known."""
    if isinstance(stmt, ast.ImportFrom) and stmt.level and package:
        parts = package.split(".")
        base = ".".join(parts[: len(parts) - stmt.level + 1] + ([stmt.module] if stmt.module else []))
        return ast.unparse(ast.ImportFrom(base, stmt.names, 0))
    segment = ast.get_source_segment(text, stmt) or ""
    if isinstance(stmt, ast.FunctionDef) and stmt.decorator_list:
        decorators = "\n".join("@" + (ast.get_source_segment(text, d) or "") for d in stmt.decorator_list)
        segment = f"{decorators}\n{segment}"
    return segment


def params(fn: ast.FunctionDef) -> list[str]:
    return [a.arg for a in fn.args.args]


def constexprs(fn: ast.FunctionDef) -> list[str]:
    """The parameters annotated ``tl.constexpr`` (or ``constexpr``)."""
    return [a.arg for a in fn.args.args if a.annotation is not None and "constexpr" in ast.unparse(a.annotation)]


def masked(fn: ast.FunctionDef) -> bool:
    """Whether the kernel masks any load or store (a kernel that masks nothing needs the sizes it was launched at)."""
    for call in ast.walk(fn):
        if not isinstance(call, ast.Call):
            continue
        func = ast.unparse(call.func)
        if not re.search(r"(^|\.)(load|store)$", func):
            continue
        at = 2 if func.endswith("store") else 1  # tl.store(pointer, value, mask), tl.load(pointer, mask)
        masks = [k.value for k in call.keywords if k.arg == "mask"] + call.args[at : at + 1]
        if any(ast.unparse(m) != "None" for m in masks):
            return True
    return False


def written(fn: ast.FunctionDef, pointers: Iterable[str]) -> list[str]:
    """The pointer parameters the kernel stores to (``tl.store``, ``tl.atomic_*``, a block pointer's or a
    descriptor's ``.store``), their values followed through assignments; every pointer when none is found."""
    pointers = list(pointers)
    flows: dict[str, set[str]] = {p: {p} for p in pointers}
    grown = True
    while grown:
        grown = False
        for node in ast.walk(fn):
            if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and node.value is not None:
                sources = set().union(*(flows.get(n, set()) for n in _names(node.value)))
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for assigned in targets:
                    for t in (n.id for n in ast.walk(assigned) if isinstance(n, ast.Name)):
                        if not sources <= flows.setdefault(t, set()):
                            flows[t] |= sources
                            grown = True
    out: set[str] = set()
    for call in ast.walk(fn):
        if not (isinstance(call, ast.Call) and _STORES.search(ast.unparse(call.func))):
            continue
        func = call.func
        target: ast.expr | None = call.args[0] if call.args else None
        if isinstance(func, ast.Attribute) and ast.unparse(func.value) not in ("tl", "triton.language"):
            target = func.value  # a block pointer's or a descriptor's .store(...)
        if target is None:
            target = next((k.value for k in call.keywords if k.arg in ("pointer", "ptr")), None)
        if target is not None:
            out |= set().union(*(flows.get(n, set()) for n in _names(target)))
    return [p for p in pointers if p in out] or pointers
