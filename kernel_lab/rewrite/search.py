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
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from kernel_lab.analysis.rules import kinds, search_guidance
from kernel_lab.metrics import OCCUPANCY_LIMITS
from kernel_lab.rewrite import cuda
from kernel_lab.rewrite.base import Candidate, Measure, RewriteContext
from kernel_lab.settings import Settings

BLOCK_NAME = re.compile(r"BLOCK|TILE|SIZE|CHUNK", re.I)
GROUP_NAME = re.compile(r"GROUP", re.I)
TILE_DIM = re.compile(r"(^|_)([MNK])$|_SIZE_([MNK])$", re.I)  # BLOCK_M, BLOCK_SIZE_K, TILE_N: a matrix tile's side
WARPS = (1, 2, 4, 8, 16)
STAGES = (1, 2, 3, 4, 5)
DEFAULTS = {"num_warps": 4, "num_stages": 3}  # Triton's, when a launch does not say
SHARED_BYTES = 227 * 1024  # shared memory a block may use (sm_80 .. sm_90)
MOST_ACCUMULATORS = 256  # fp32 registers per thread for a tile's accumulator, past which it spills
MOST_PER_THREAD = 128  # elements per thread of a 1-D block
SETTLED = 1.02  # a start within this factor of a screened local optimum's time: the search is done (screen noise)


@dataclass
class Launch:
    """One ``kernel[grid](...)`` call in the cell, with its literal launch parameters."""

    kernel: str
    grid: ast.expr
    params: dict[str, tuple[int, ast.Constant | None]] = field(default_factory=dict)  # name -> (value, literal node)
    call: ast.Call | None = None
    loops: bool = False  # the kernel has a loop (num_stages matters)
    dots: bool = False  # the kernel multiplies tiles (tl.dot)


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
            body = kernels[name]
            launch = Launch(
                name,
                node.func.slice,
                call=node,
                loops=any(isinstance(n, (ast.For, ast.While)) for n in ast.walk(body)),
                dots=".dot(" in ast.unparse(body),
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


def grid_params(launch: Launch) -> list[tuple[ast.Constant, str]]:
    """The literals of a launch's grid that spell a block size, each with the parameter it follows.

    A literal equal to one block size follows it. One equal to several (``BLOCK_M=BLOCK_N=32``) follows the
    one whose side the sizes beside it name (``cdiv(M, 32)`` → ``BLOCK_M``), else the next in keyword order;
    a tile's K side never sizes the grid."""
    blocks = [(n, v) for n, (v, _) in launch.params.items() if n not in DEFAULTS]
    out: list[tuple[ast.Constant, str]] = []
    calls: list[ast.expr] = [n for n in ast.walk(launch.grid) if isinstance(n, ast.Call)]
    for call in calls or [launch.grid]:
        names = " ".join(ast.unparse(a) for a in getattr(call, "args", []))
        for node in ast.walk(call):
            if not isinstance(node, ast.Constant) or any(node is c for c, _ in out):
                continue
            same = [n for n, v in blocks if v == node.value and _side(n) != "K"]
            taken = {n for _, n in out}
            named = [n for n in same if (side := _side(n)) and re.search(rf"\b{side}\b", names, re.I) and n not in taken]
            free = named or [n for n in same if n not in taken] or same
            if free:
                out.append((node, free[0]))
    return out


def _offset(source: str, line: int, col: int) -> int:
    return sum(len(text) for text in source.splitlines(keepends=True)[: line - 1]) + col


def apply(source: str, launch: Launch, config: dict[str, int]) -> str:
    """The cell with ``launch`` using ``config``; the grid's literals follow their block sizes (:func:`grid_params`)."""
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
    edits += [(*span(node), str(config[name])) for node, name in grid_params(launch) if name in config]
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


# --- the space of launch parameters, searched with quick measurements (see kernel_lab.verify.screen) ---------

Config = dict[str, int]


def _powers(low: int, high: int) -> tuple[int, ...]:
    return tuple(1 << i for i in range(low.bit_length() - 1, high.bit_length()))


def space(launch: Launch) -> dict[str, tuple[int, ...]]:
    """Each knob of a launch and the values it may take: block sizes (a matrix tile's sides 16..256, other
    blocks 16..16384, powers of two), group sizes, ``num_warps``, and ``num_stages`` when the kernel loops."""
    knobs: dict[str, tuple[int, ...]] = {}
    for name, (value, _) in launch.params.items():
        if name in DEFAULTS or value <= 0 or value & (value - 1):
            continue
        if GROUP_NAME.search(name):
            knobs[name] = tuple(sorted({1, 2, 4, 8, 16, value}))
        elif BLOCK_NAME.search(name):
            knobs[name] = tuple(sorted({*_powers(16, 256 if TILE_DIM.search(name) else 16384), value}))
    knobs["num_warps"] = WARPS
    if launch.loops:
        knobs["num_stages"] = STAGES
    return knobs


def current(launch: Launch) -> Config:
    """The launch's own configuration (Triton's defaults where it says nothing)."""
    return {name: launch.params[name][0] if name in launch.params else DEFAULTS[name] for name in space(launch)}


def _is_block(name: str) -> bool:
    """Whether a launch parameter is a block (or tile) size: not a group size, warps or stages."""
    return bool(BLOCK_NAME.search(name)) and not GROUP_NAME.search(name) and name not in DEFAULTS


def _side(name: str) -> str | None:
    """Which side of a matrix tile a block size is (M, N or K), if it is one."""
    m = TILE_DIM.search(name) if _is_block(name) else None
    return (m.group(2) or m.group(3)).upper() if m else None


def feasible(launch: Launch, config: Config) -> bool:
    """Whether a configuration fits the hardware: a tile's accumulator in registers and its pipeline in
    shared memory (2-byte elements), or a 1-D block's elements per thread in registers."""
    warps = config["num_warps"]
    sides = {side: v for n, v in config.items() if (side := _side(n))}
    if launch.dots and {"M", "N", "K"} <= set(sides):
        m, n, k = (sides[d] for d in "MNK")
        stages = config.get("num_stages", DEFAULTS["num_stages"])
        return m * n / (32 * warps) <= MOST_ACCUMULATORS and (m * k + k * n) * 2 * max(stages - 1, 1) <= SHARED_BYTES
    blocks = [v for n, v in config.items() if _is_block(n)]
    return all(v / (32 * warps) <= MOST_PER_THREAD for v in blocks)


def neighbours(launch: Launch, config: Config, kind: str) -> list[Config]:
    """Configurations one move from ``config``: each knob a step up or down (block sizes also two steps),
    block sizes together, block sizes with warps; those the bottleneck's guidance favours first."""
    knobs = space(launch)
    blocks = [n for n in knobs if _is_block(n)]

    def step(name: str, by: int, base: Config) -> Config | None:
        values = knobs[name]
        i = values.index(base[name]) + by if base[name] in values else -1
        return {**base, name: values[i]} if 0 <= i < len(values) else None

    def steps(names: list[str], by: int) -> Config | None:
        moved: Config | None = config
        for name in names:
            moved = step(name, by, moved) if moved is not None else None
        return moved

    moves: list[tuple[int, int, Config | None]] = []  # (block direction, warp direction, config)
    for name in knobs:
        for by in (1, -1, 2, -2) if name in blocks else (1, -1):
            moves.append((by * (name in blocks), by * (name == "num_warps"), step(name, by, config)))
    if len(blocks) > 1:
        moves += [(by, 0, steps(blocks, by)) for by in (1, -1)]
    moves += [(by, by, steps([*blocks, "num_warps"], by)) for by in (1, -1)]
    block_dir, warp_dir, _ = search_guidance().get(kind, (+1, +1, ""))
    moves.sort(key=lambda m: -(m[0] * block_dir > 0) - (m[1] * warp_dir > 0))
    out: list[Config] = []
    for _, _, moved in moves:
        if moved is not None and moved != config and moved not in out and feasible(launch, moved):
            out.append(moved)
    return out


def restarts(launch: Launch) -> list[Config]:
    """Other places to start from when a neighbourhood holds nothing faster: the shapes fast kernels of
    this kind usually have (big tiles with deep pipelines for a matrix product, big blocks otherwise)."""
    base = current(launch)
    knobs = space(launch)
    blocks = [n for n in knobs if _is_block(n)]
    if launch.dots:
        picks = [(128, 128, 64, 8, 3), (128, 256, 64, 8, 3), (64, 128, 32, 4, 4), (256, 128, 64, 8, 3)]
        sides = {n: side for n in blocks if (side := _side(n))}
        points = [
            {**base, **{n: {"M": m, "N": nn, "K": k}[d] for n, d in sides.items()}, "num_warps": w}
            | ({"num_stages": s} if "num_stages" in knobs else {})
            for m, nn, k, w, s in picks
        ]
    else:
        points = [{**base, **{n: v for n in blocks}, "num_warps": w} for v, w in ((1024, 4), (4096, 8), (256, 4))]
    return [p for p in points if all(p[n] in knobs[n] for n in p) and feasible(launch, p) and p != base]


def _key(config: Config) -> tuple[tuple[str, int], ...]:
    return tuple(sorted(config.items()))


def _unique(configs: list[Config]) -> list[Config]:
    return list({_key(c): c for c in configs}.values())


def _delta(launch: Launch, config: Config) -> Config:
    """What ``config`` changes in the launch (so a rewritten cell spells out only what changed)."""
    before = current(launch)
    return {n: v for n, v in config.items() if v != before[n]}


def _changes(launch: Launch, config: Config) -> str:
    before = current(launch)
    return ", ".join(f"{n} {before[n]} → {v}" for n, v in _delta(launch, config).items())


#: bottleneck kinds a CUDA transformation answers although launch parameters do not (cuda.py)
CUDA_FIXES = frozenset({"shared_bank_conflicts"})


@dataclass
class SearchRewriter:
    """Proposes launch-parameter variants (Triton) and known transformations (CUDA)."""

    name: str = "search"
    tried: set[str] = field(default_factory=set)
    screened: int = 0  # variants measured by the last explore
    recalled: int = 0  # variants the last explore knew from earlier ones (not measured again)
    measured: dict[str, float | None] = field(default_factory=dict)  # screen times by the variant's source, all rounds
    optimum: tuple[str, float, Config] | None = None  # the fastest place whose neighbourhood held nothing faster
    settled: str = ""  # why the last explore measured nothing: its start runs as fast as that place

    @classmethod
    def from_settings(cls, settings: Settings, say: Callable[[str], None]) -> SearchRewriter:
        return cls()

    @property
    def cannot_fix(self) -> frozenset[str]:
        """Kinds whose fix changes what the code does (access pattern, control flow, instructions): the rules
        that give the search no direction, less those a CUDA transformation answers."""
        return frozenset(kinds()) - set(search_guidance()) - CUDA_FIXES

    def why_nothing(self, source: str) -> str | None:
        """The CUDA launches whose block size cannot be read, with their lines."""
        return "; ".join(cuda.unreadable(source)) or None

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

    def explore(self, context: RewriteContext, measure: Measure, *, n: int, budget_s: float, most: int) -> list[Candidate]:
        """Local search over the launch parameters of the top bottleneck's kernel, with quick measurements:
        measure a neighbourhood (the first one with the places fast kernels of this kind usually are:
        :func:`restarts`), move to its fastest, and when none is faster start again from one of those places not yet
        looked around, until ``most`` variants are measured or ``budget_s`` is spent. A variant measured by an
        earlier explore (the same screen's input) is not measured again; the start always is (its time is the
        fastest it was seen at, so that one slow reading does not make every neighbour look faster). The ``n``
        fastest variants that beat the start come back, fastest first. A start that runs within SETTLED of the fastest
        place found so far whose neighbourhood held nothing faster is not looked around (:attr:`settled` says so).
        Cells without a Triton launch: :meth:`propose`."""
        self.screened = self.recalled = 0
        self.settled = ""
        top = dict(context.bottlenecks[0]) if context.bottlenecks else {"kind": "latency_bound"}
        found = launches(context.source)
        launch = next((x for x in found if x.kernel in str(top.get("kernel", ""))), found[0] if found else None)
        if launch is None:
            return self.propose(context, n)
        kind, started = top["kind"], time.monotonic()
        start = here = current(launch)
        if self._settled(context.source):
            return []
        fresh = True  # ``here`` is a place to start from, not measured yet
        times: dict[tuple[tuple[str, int], ...], float | None] = {}

        def source(config: Config) -> str:
            return apply(context.source, launch, _delta(launch, config))

        places = restarts(launch)
        looked: set[tuple[tuple[str, int], ...]] = set()  # the places looked around
        while self.screened < most and time.monotonic() - started < budget_s:
            looked.add(_key(here))
            # the first batch also tries the places fast kernels of this kind usually are: a start far from them
            # (16x16 tiles, one warp) would take many small steps to get there
            ahead = places if here is start else []
            around = _unique(ahead + neighbours(launch, here, kind))
            batch = [here] * fresh + [c for c in around if _key(c) not in times]
            known = [c for c in batch if source(c) in self.measured and c != start]
            new = [c for c in batch if c not in known][: most - self.screened]
            if new or known:
                texts = [source(c) for c in new]
                got = measure(texts) if texts else []
                self.screened += len(new)
                self.recalled += len(known)
                for text, ms in zip(texts, got):
                    seen = [t for t in (ms, self.measured.get(text)) if t is not None]
                    self.measured[text] = min(seen, default=None)
                times.update({_key(c): self.measured[source(c)] for c in new + known})
                if times.get(_key(start)) is None:
                    break  # the version itself does not run in the screen: nothing to compare with
            # the neighbourhood, measured now or earlier in this search
            timed = [(ms, c) for c in around if (ms := times.get(_key(c))) is not None]
            here_ms = times.get(_key(here))
            fastest = min(timed, key=lambda t: t[0], default=None)
            if fastest is not None and here_ms is not None and fastest[0] < 0.99 * here_ms:
                here, fresh = fastest[1], False  # a faster place: look around it
                continue
            whole = all(_key(c) in times for c in around)  # and none of it faster: a local optimum
            if here_ms is not None and whole and (self.optimum is None or here_ms < self.optimum[1]):
                self.optimum = (source(here), here_ms, here)
            unseen = [p for p in places if _key(p) not in looked]  # nothing faster here: start again elsewhere
            if not unseen:
                break
            here = unseen[0]
            fresh = _key(here) not in times
        start_ms = times.get(_key(start))
        ranked = sorted(((ms, dict(k)) for k, ms in times.items() if ms is not None), key=lambda t: t[0])
        out: list[Candidate] = []
        for ms, config in ranked:
            if start_ms is None or ms >= 0.99 * start_ms or len(out) == n:
                break
            text = source(config)
            if text not in self.tried:
                why = f"{launch.kernel}: {_changes(launch, config)}: {ms:.3f} ms against {start_ms:.3f} ms in the screen"
                out.append(Candidate(text, f"{why}.", top["kind"], "search", {"config": config, "screen_ms": ms}))
        self.tried.update(c.source for c in out)
        return out

    def _settled(self, start: str) -> bool:
        """Whether ``start``, screened in an earlier explore, runs within SETTLED of the fastest place whose whole
        neighbourhood was screened and held nothing faster (another place: its own neighbours were not all
        screened). Looking around it would measure configurations that differ from that optimum by the screen's
        noise: the search is done, and :attr:`settled` says why."""
        known = self.measured.get(start)
        if self.optimum is None or known is None or start == self.optimum[0] or known > SETTLED * self.optimum[1]:
            return False
        config = ", ".join(f"{name} {value}" for name, value in self.optimum[2].items())
        self.settled = (
            f"runs within {SETTLED - 1:.0%} of the fastest launch configuration screened ({config}: "
            f"{self.optimum[1]:.3f} ms against {known:.3f} ms), around which nothing was faster"
        )
        return True


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
