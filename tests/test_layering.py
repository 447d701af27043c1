"""The house's floors: no module imports a floor above its own, and no imports go round in a cycle.

Floors, bottom up (README, "Layout"): the shared vocabulary; profiling; analysis; rewrite and verify;
the session and the loop; results and how they are drawn; the API and the course; the front ends.
Imports under ``if TYPE_CHECKING:`` are for annotations only and do not count; imports inside
functions (lazy ones) do.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "kernel_lab"
FLOORS = {
    0: {
        "errors",
        "models",
        "metrics",
        "cells",
        "hardware",
        "settings",
        "processes",
        "builds",
        "fastbuild",
        "samples",
        "interpreter",
    },
    1: {"profiling"},
    2: {"analysis"},
    3: {"rewrite", "verify"},
    4: {"session", "loop"},
    5: {"results", "display", "widgets", "frontend"},
    6: {"api", "course", "suite", "lifting", "rewriter_bench"},
    7: {"magics", "cli", "options"},
}
FLOOR = {name: level for level, names in FLOORS.items() for name in names}
#: cells and data shipped with the package: user code, not Kernel Lab's
NOT_MODULES = ("samples/kernels", "course/lessons", "labextension")


def modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        relative = path.relative_to(PACKAGE)
        if any(str(relative).startswith(p) for p in NOT_MODULES):
            continue
        parts = ["kernel_lab", *relative.with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _type_checking(node: ast.If) -> bool:
    return "TYPE_CHECKING" in ast.unparse(node.test)


def imports(path: Path, known: set[str]) -> set[str]:
    """The kernel_lab modules ``path`` imports at run time (module level or inside functions)."""
    out: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.startswith("kernel_lab"))
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("kernel_lab"):
            for alias in node.names:
                sub = f"{node.module}.{alias.name}"
                out.add(sub if sub in known else node.module)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text()))
    return out


def floor(module: str) -> int | None:
    parts = module.split(".")
    return FLOOR.get(parts[1]) if len(parts) > 1 else None


GRAPH = {name: imports(path, set(modules())) for name, path in modules().items()}


def test_every_module_has_a_floor():
    assert [m for m in GRAPH if m != "kernel_lab" and floor(m) is None] == []


@pytest.mark.parametrize("module", sorted(m for m in GRAPH if m != "kernel_lab"))
def test_no_module_imports_a_floor_above_its_own(module):
    own = floor(module)
    above = sorted(t for t in GRAPH[module] if t != "kernel_lab" and (floor(t) or 0) > (own or 0))
    assert above == [], f"{module} (floor {own}) imports {above}"


def test_no_import_cycles():
    state: dict[str, int] = {}
    cycles = []

    def walk(node: str, path: list[str]) -> None:
        state[node] = 1
        for target in sorted(GRAPH.get(node, ())):
            if target not in GRAPH or target == "kernel_lab":
                continue
            if state.get(target) == 1:
                cycles.append([*path[path.index(target) :], target] if target in path else [node, target])
            elif target not in state:
                walk(target, [*path, target])
        state[node] = 2

    for name in sorted(GRAPH):
        if name not in state:
            walk(name, [name])
    assert cycles == []


def test_the_check_sees_an_upward_import(tmp_path):
    """The check can fail: an analysis module importing the results floor is caught."""
    bad = tmp_path / "bad.py"
    bad.write_text("def f():\n    from kernel_lab.results.profile import Result\n")
    found = imports(bad, set(modules()))
    assert found == {"kernel_lab.results.profile"} and floor("kernel_lab.results.profile") > floor(
        "kernel_lab.analysis.conductor"
    )
