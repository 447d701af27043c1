"""The space of launch configurations of one launch: which values each knob may take, what fits the hardware,
and which configurations are one move apart (the search strategy lives in :mod:`kernel_lab.rewrite.search`)."""

from __future__ import annotations

import math
from collections.abc import Mapping

from kernel_lab.analysis.rules import search_guidance
from kernel_lab.rewrite.launch import DEFAULTS, GROUP_NAME, TILE_DIM, Launch, is_block, side

WARPS = (1, 2, 4, 8, 16)
STAGES = (1, 2, 3, 4, 5)
SHARED_BYTES = 227 * 1024  # shared memory a block may use (sm_80 .. sm_90)
MOST_ACCUMULATORS = 256  # fp32 registers per thread for a tile's accumulator, past which it spills
MOST_PER_THREAD = 128  # elements per thread of a 1-D block
LARGEST_BLOCK = 16384

Config = dict[str, int]


def _powers(low: int, high: int) -> tuple[int, ...]:
    return tuple(1 << i for i in range(low.bit_length() - 1, high.bit_length()))


def _power_of_two(value: int | None) -> bool:
    return value is not None and value > 0 and not value & (value - 1)


def space(launch: Launch) -> dict[str, tuple[int, ...]]:
    """Each tunable knob of a launch and the values it may take: block sizes (a matrix tile's sides 16..256, other
    blocks 16..16384, powers of two; a block that covers a whole row only grows, an unmasked tile only shrinks),
    group sizes, ``num_warps``, and
    ``num_stages`` when the kernel loops. A knob whose value is not known yet (set at run time, and not yet seen
    running) is left out."""
    knobs: dict[str, tuple[int, ...]] = {}
    for name, knob in launch.knobs.items():
        if not knob.tunable or knob.value is None:
            continue
        if name == "num_warps":
            knobs[name] = tuple(sorted({*WARPS, knob.value}))
        elif name == "num_stages":
            if launch.loops:
                knobs[name] = tuple(sorted({*STAGES, knob.value}))
        elif not _power_of_two(knob.value):
            continue
        elif GROUP_NAME.search(name):
            knobs[name] = tuple(sorted({1, 2, 4, 8, 16, knob.value}))
        elif is_block(name):
            values = _powers(16, 256 if TILE_DIM.search(name) else LARGEST_BLOCK)
            if knob.moves == "up":  # it covers a whole row
                values = tuple(v for v in values if v >= knob.value)
            elif knob.moves == "down":  # unmasked: a larger block would read and write past the data
                values = tuple(v for v in values if v <= knob.value)
            knobs[name] = tuple(sorted({*values, knob.value}))
    return knobs


def current(launch: Launch) -> Config:
    """The launch's own configuration (Triton's defaults where it says nothing)."""
    return {name: launch.knobs[name].value or DEFAULTS.get(name, 0) for name in space(launch)}


def feasible(launch: Launch, config: Config) -> bool:
    """Whether a configuration fits the hardware: a tile's accumulator in registers and its pipeline in
    shared memory (2-byte elements), or a block's elements per thread in registers (the product of its sides)."""
    warps = config.get("num_warps", DEFAULTS["num_warps"])
    sides = {s: v for n, v in config.items() if (s := side(n))}
    if launch.dots and {"M", "N", "K"} <= set(sides):
        m, n, k = (sides[d] for d in "MNK")
        stages = config.get("num_stages", DEFAULTS["num_stages"])
        return m * n / (32 * warps) <= MOST_ACCUMULATORS and (m * k + k * n) * 2 * max(stages - 1, 1) <= SHARED_BYTES
    elements = math.prod(v for n, v in config.items() if is_block(n))
    return elements / (32 * warps) <= MOST_PER_THREAD


def neighbours(launch: Launch, config: Config, kind: str) -> list[Config]:
    """Configurations one move from ``config``: each knob a step up or down (block sizes also two steps),
    block sizes together, block sizes with warps; those the bottleneck's guidance favours first."""
    knobs = space(launch)
    blocks = [n for n in knobs if is_block(n)]

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
    if "num_warps" in knobs:
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
    blocks = [n for n in knobs if is_block(n)]
    warps = {"num_warps"} & set(knobs)
    if launch.dots:
        picks = [(128, 128, 64, 8, 3), (128, 256, 64, 8, 3), (64, 128, 32, 4, 4), (256, 128, 64, 8, 3)]
        sides = {n: s for n in blocks if (s := side(n))}
        points = [
            {**base, **{n: {"M": m, "N": nn, "K": k}[d] for n, d in sides.items()}, **dict.fromkeys(warps, w)}
            | ({"num_stages": s} if "num_stages" in knobs else {})
            for m, nn, k, w, s in picks
        ]
    else:
        points = [{**base, **dict.fromkeys(blocks, v), **dict.fromkeys(warps, w)} for v, w in ((1024, 4), (4096, 8), (256, 4))]
    return [p for p in points if all(p[n] in knobs[n] for n in p) and feasible(launch, p) and p != base]


def delta(launch: Launch, config: Mapping[str, int]) -> Config:
    """What ``config`` changes in the launch (so a rewritten cell spells out only what changed)."""
    before = current(launch)
    return {n: v for n, v in config.items() if v != before.get(n)}


def changes(launch: Launch, config: Mapping[str, int]) -> str:
    """``BLOCK 1024 → 2048, num_warps 4 → 8``."""
    before = current(launch)
    return ", ".join(f"{n} {before[n]} → {v}" for n, v in delta(launch, config).items())
