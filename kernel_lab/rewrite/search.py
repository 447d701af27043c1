"""The built-in optimizer (no LLM): launch-parameter search for Triton, known transformations for CUDA.

Triton: every launch ``kernel[grid](..., BLOCK=1024)`` of a ``@triton.jit`` kernel defined in the
cell is a search point. Candidates change its ``tl.constexpr`` block sizes, ``num_warps`` and
``num_stages``; a grid that spells out the old block size (``triton.cdiv(n, 1024)``) is rewritten
with the new one. Which changes are tried first depends on the top bottleneck.

CUDA: the known transformations of :mod:`kernel_lab.rewrite.cuda` (padded shared tiles, block
sizes, ``__launch_bounds__``), each tied to the bottleneck it answers.

Each candidate says which bottleneck it answers. Timing decides among them (the judge).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from kernel_lab.analysis.rules import kinds, search_guidance
from kernel_lab.metrics import OCCUPANCY_LIMITS
from kernel_lab.rewrite import cuda
from kernel_lab.rewrite.base import Candidate, RewriteContext
from kernel_lab.settings import Settings

BLOCK_NAME = re.compile(r"BLOCK|TILE|SIZE|CHUNK", re.I)
WARPS = (1, 2, 4, 8, 16)
STAGES = (1, 2, 3, 4, 5)


@dataclass
class Launch:
    """One ``kernel[grid](...)`` call in the cell, with its literal launch parameters."""

    kernel: str
    grid: ast.expr
    params: dict[str, tuple[int, ast.Constant | None]] = field(default_factory=dict)  # name -> (value, literal node)
    call: ast.Call | None = None
    loops: bool = False  # the kernel has a loop (num_stages matters)


def _triton_kernels(tree: ast.Module) -> dict[str, ast.FunctionDef]:
    """``@triton.jit`` functions of the cell; autotuned ones are left alone (they tune themselves)."""
    out = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            decorators = [ast.unparse(d) for d in node.decorator_list]
            if any("jit" in d for d in decorators) and not any("autotune" in d for d in decorators):
                out[node.name] = node
    return out


def launches(source: str) -> list[Launch]:
    """The launches of the cell's own (not autotuned) Triton kernels, with their literal parameters."""
    tree = ast.parse(source)
    kernels = _triton_kernels(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Subscript) and isinstance(node.func.value, ast.Name):
            name = node.func.value.id
            if name not in kernels:
                continue
            constexprs = {
                a.arg for a in kernels[name].args.args if a.annotation is not None and "constexpr" in ast.unparse(a.annotation)
            }
            launch = Launch(
                name, node.func.slice, call=node, loops=any(isinstance(n, (ast.For, ast.While)) for n in ast.walk(kernels[name]))
            )
            for kw in node.keywords:
                node_value = kw.value
                number = node_value.value if isinstance(node_value, ast.Constant) else None
                literal = isinstance(number, int) and not isinstance(number, bool)
                if kw.arg and literal and (kw.arg in constexprs or kw.arg in ("num_warps", "num_stages")):
                    assert isinstance(node_value, ast.Constant) and isinstance(number, int)
                    launch.params[kw.arg] = (number, node_value)
            found.append(launch)
    return found


def _offset(source: str, line: int, col: int) -> int:
    return sum(len(text) for text in source.splitlines(keepends=True)[: line - 1]) + col


def apply(source: str, launch: Launch, config: dict[str, int]) -> str:
    """The cell with ``launch`` using ``config``.

    A literal in the grid equal to an old block size follows it when that is unambiguous: every
    block parameter with that old value gets the same new value.
    """
    edits: list[tuple[int, int, str]] = []

    def span(node: ast.expr) -> tuple[int, int]:
        return _offset(source, node.lineno, node.col_offset), _offset(
            source, node.end_lineno or node.lineno, node.end_col_offset or 0
        )

    assert launch.call is not None  # launches() always records the call
    for name, value in config.items():
        node = launch.params.get(name, (None, None))[1]
        if node is not None:
            edits.append((*span(node), str(value)))
        else:  # num_warps / num_stages not given: add them
            end = span(launch.call)[1] - 1  # before ')'
            edits.append((end, end, f", {name}={value}"))
    blocks = {n: v for n, (v, _) in launch.params.items() if n not in ("num_warps", "num_stages")}
    for old in set(blocks.values()):
        sharing = [n for n, v in blocks.items() if v == old]
        new = {config.get(n) for n in sharing}
        if len(new) == 1 and None not in new:
            text = str(new.pop())
            edits += [(*span(g), text) for g in ast.walk(launch.grid) if isinstance(g, ast.Constant) and g.value == old]
    for start, end, text in sorted(edits, reverse=True):
        source = source[:start] + text + source[end:]
    return source


def _configs(launch: Launch, kind: str) -> list[tuple[dict[str, int], str]]:
    """Launch configurations to try, most promising first for this bottleneck kind, with the reason."""
    block_dir, warp_dir, why = search_guidance().get(kind, (+1, +1, "a different launch configuration"))
    warps = launch.params.get("num_warps", (4, None))[0]
    stages = launch.params.get("num_stages", (3, None))[0]
    blocks = {n: v for n, (v, _) in launch.params.items() if BLOCK_NAME.search(n) and v > 0 and v & (v - 1) == 0}
    b, w = (2.0 if block_dir >= 0 else 0.5), (2.0 if warp_dir >= 0 else 0.5)

    def plan(block_factor: float = 1, warp_factor: float = 1, only: str | None = None) -> dict[str, int]:
        config = {n: int(v * block_factor) for n, v in blocks.items() if only in (None, n)}
        config["num_warps"] = int(warps * warp_factor)
        return config

    plans = [plan(b), plan(1, w), plan(b, w), plan(b * b, w * w), plan(1, w * w), plan(b * b), plan(1 / b), plan(1, 1 / w)]
    plans += [plan(b, 1, only=n) for n in blocks] + [plan(1 / b, 1, only=n) for n in blocks]
    if launch.loops:
        plans += [{"num_stages": s} for s in STAGES if s != stages]
    out: list[tuple[dict[str, int], str]] = []
    for config in plans:
        changed = {n: v for n, v in config.items() if v != launch.params.get(n, (warps if n == "num_warps" else stages, None))[0]}
        if not changed or changed in [c for c, _ in out]:
            continue
        if any(not 16 <= v <= 8192 for n, v in changed.items() if n in blocks) or changed.get("num_warps", warps) not in WARPS:
            continue
        before = {n: launch.params[n][0] if n in launch.params else (warps if n == "num_warps" else stages) for n in changed}
        text = ", ".join(f"{n} {before[n]} → {v}" for n, v in changed.items())
        out.append(
            (changed, f"{text}: {why if 'num_stages' not in changed else 'deeper software pipelining hides load latency'}")
        )
    return out


#: bottleneck kinds a CUDA transformation answers although launch parameters do not (cuda.py)
CUDA_FIXES = frozenset({"shared_bank_conflicts"})


@dataclass
class SearchRewriter:
    """Proposes launch-parameter variants (Triton) and known transformations (CUDA)."""

    name: str = "search"
    tried: set[str] = field(default_factory=set)

    @classmethod
    def from_settings(cls, settings: Settings, say: Callable[[str], None]) -> SearchRewriter:
        return cls()

    @property
    def cannot_fix(self) -> frozenset[str]:
        """Kinds whose fix changes what the code does (access pattern, control flow, instructions): the rules
        that give the search no direction, less those a CUDA transformation answers."""
        return frozenset(kinds()) - set(search_guidance()) - CUDA_FIXES

    def propose(self, context: RewriteContext, n: int = 8) -> list[Candidate]:
        bottlenecks = list(context.bottlenecks) or [{"kind": "latency_bound"}]
        out: list[Candidate] = []
        for bottleneck in bottlenecks:
            for source, why, meta in _ideas(context.source, bottleneck):
                if source not in self.tried and source != context.source and all(c.source != source for c in out):
                    out.append(Candidate(source, f"{why}.", bottleneck["kind"], "search", meta))
        out = out[:n]
        self.tried.update(c.source for c in out)
        return out


def _ideas(source: str, bottleneck: Mapping[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """Rewritten cells that answer one bottleneck, most promising first: (source, why, meta)."""
    kind, limiter = bottleneck["kind"], bottleneck.get("limiter")
    if kind == "shared_bank_conflicts" and (padded := cuda.pad_shared_tiles(source)):
        yield (
            padded,
            "Padded each 2-D shared-memory tile by one column ([T][T] → [T][T + 1]) so a column of the tile spans all 32 banks",
            {},
        )
    if kind == "low_occupancy" and limiter == "registers":
        blocks = bottleneck.get("evidence", {}).get(OCCUPANCY_LIMITS["registers"])
        for rewritten, why in cuda.launch_bounds(source, int(blocks) if blocks else None):
            yield rewritten, why, {}
    if kind == "register_spills":
        for rewritten, why in cuda.launch_bounds(source, relax=True):
            yield rewritten, why, {}
    direction = +1 if limiter == "block_size" else search_guidance().get(kind, (+1, 0, ""))[0]
    for rewritten, why in cuda.block_sizes(source, direction):
        yield rewritten, why, {}
    for launch in launches(source):
        for config, why in _configs(launch, kind):
            yield apply(source, launch, config), f"{launch.kernel}: {why}", {"config": config}
