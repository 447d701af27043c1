"""The user's harness, kept in every answer: ``make_inputs``, ``SHAPES``, the top-level constants they read, and every
top-level function of the cell that ``run`` does not reach (directly, or through what it calls) stay exactly as the
user wrote them. A rewrite may change the kernels, ``run`` and the helpers ``run`` reaches, and add its own.

:func:`keep_harness` re-attaches the user's definitions to an answer (found by ``ast``, replaced line for line, or put
back at the end when the answer dropped them) and says which it had changed, so the model can be told.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from kernel_lab.cells import parse

HARNESS = ("make_inputs", "SHAPES")  # always the user's, whatever reads them


@dataclass(frozen=True)
class Kept:
    """An answer with the user's harness re-attached: its source, and the harness names it had changed or dropped."""

    source: str
    changed: tuple[str, ...] = ()
    dropped: tuple[str, ...] = ()

    def text(self) -> str:
        """What the model is told, or "" when its answer left the harness alone."""
        said = []
        if self.changed:
            said.append(f"changed {_names(self.changed)}")
        if self.dropped:
            said.append(f"dropped {_names(self.dropped)}")
        if not said:
            return ""
        return (
            f"Your answer {' and '.join(said)}: the harness is the user's, so it was judged with the user's own "
            "definitions put back. Change only the kernels, run and the helpers run calls."
        )


def _names(names: tuple[str, ...]) -> str:
    return ", ".join(f"`{n}`" for n in names)


def _defined(node: ast.stmt) -> str | None:
    """The one name a top-level function, class or simple assignment defines, else None."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return node.name
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
        return node.targets[0].id
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return node.target.id
    return None


def _top(tree: ast.Module) -> dict[str, ast.stmt]:
    """Name -> its last top-level definition."""
    return {name: node for node in tree.body if (name := _defined(node)) is not None}


def _reads(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _closure(start: set[str], top: dict[str, ast.stmt], through: tuple[type, ...], outside: set[str]) -> set[str]:
    """The names reached from ``start`` through what the top-level definitions read: past ``start`` only through
    definitions of a type in ``through``, never into ``outside``."""
    seen: set[str] = set()
    todo = [n for n in start if n in top]
    while todo:
        name = todo.pop()
        if name in seen or name in outside:
            continue
        seen.add(name)
        if name in start or isinstance(top[name], through):
            todo += [n for n in _reads(top[name]) if n in top]
    return seen


FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def harness_names(original: str) -> list[str]:
    """The names of the user's harness in ``original``, in the order it defines them: ``make_inputs``, ``SHAPES``,
    the functions ``run`` does not reach, and the constants these read (through anything but ``run``'s own)."""
    top = _top(parse(original))
    run = _closure({"run"}, top, FUNCTIONS, set()) if "run" in top else set()
    uncalled = {n for n, node in top.items() if isinstance(node, FUNCTIONS) and n not in run}
    roots = {n for n in HARNESS if n in top} | uncalled
    runs = {n for n in run if isinstance(top[n], FUNCTIONS)}
    kept = _closure(roots, top, (ast.Assign, ast.AnnAssign), runs)
    return [n for n in top if n in kept]


def _span(node: ast.stmt) -> tuple[int, int]:
    """(first line, last line) of a top-level statement, 0-based, decorators included."""
    decorators = getattr(node, "decorator_list", ())
    first = min([node.lineno, *(d.lineno for d in decorators)])
    return first - 1, (node.end_lineno or node.lineno) - 1


def _text(lines: list[str], node: ast.stmt) -> list[str]:
    first, last = _span(node)
    return lines[first : last + 1]


def keep_harness(original: str, answer: str) -> Kept:
    """``answer`` with the harness of ``original`` as the user wrote it (unchanged when either does not parse)."""
    try:
        mine, theirs = parse(original), parse(answer)
        names = harness_names(original)
    except (SyntaxError, ValueError):
        return Kept(answer)
    user_lines, lines = original.splitlines(), answer.splitlines()
    user, top = _top(mine), _top(theirs)
    changed, dropped, missing = [], [], []
    replace: list[tuple[int, int, list[str]]] = []
    for name in names:
        wanted = _text(user_lines, user[name])
        if name not in top:
            dropped.append(name)
            missing += ["", "", *wanted]
        elif _text(lines, top[name]) != wanted:
            changed.append(name)
            replace.append((*_span(top[name]), wanted))
    for first, last, wanted in sorted(replace, reverse=True):
        lines[first : last + 1] = wanted
    if not changed and not dropped:
        return Kept(answer)
    return Kept("\n".join(lines + missing).rstrip("\n") + "\n", tuple(changed), tuple(dropped))
