"""The built-in optimizer (no LLM): launch-parameter search for Triton, known transformations for CUDA.

Triton: every launch of a ``@triton.jit`` kernel defined in the cell is a search point, wherever its knobs are
set (:mod:`kernel_lab.rewrite.launch`: literals, variables, helpers, dicts, autotune configurations). Candidates
change its block sizes, group sizes, ``num_warps`` and ``num_stages`` within :mod:`kernel_lab.rewrite.space`; a
grid follows the block sizes it depends on, and a knob the grid cannot follow is left alone, saying why. Which
changes are tried first depends on the top bottleneck.

CUDA: the known transformations of :mod:`kernel_lab.rewrite.cuda` (padded shared tiles, block
sizes, ``__launch_bounds__``), each tied to the bottleneck it answers.

Each candidate says which bottleneck it answers. Timing decides among them (the judge).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from kernel_lab.analysis.rules import kinds, search_guidance
from kernel_lab.metrics import OCCUPANCY_LIMITS
from kernel_lab.rewrite import cuda
from kernel_lab.rewrite.base import Candidate, Explored, Measure, Measured, RewriteContext
from kernel_lab.rewrite.launch import Launch, apply, describe, interpreted, is_block, launches
from kernel_lab.rewrite.space import Config, changes, current, delta, feasible, neighbours, restarts, space
from kernel_lab.settings import Settings

SETTLED = 1.02  # a start within this factor of a screened local optimum's time: the search is done (screen noise)


def _configs(launch: Launch, kind: str) -> list[tuple[Config, str]]:
    """Launch configurations to try without measuring first, most promising first for this kind, with the reason."""
    block_dir, warp_dir, why = search_guidance().get(kind, (+1, +1, "a different launch configuration"))
    base = current(launch)
    knobs = space(launch)
    blocks = [n for n in knobs if is_block(n)]
    b, w = (2.0 if block_dir >= 0 else 0.5), (2.0 if warp_dir >= 0 else 0.5)

    def plan(block_factor: float = 1, warp_factor: float = 1, only: str | None = None) -> Config:
        config = {n: int(base[n] * block_factor) for n in blocks if only in (None, n)}
        return config | ({"num_warps": int(base["num_warps"] * warp_factor)} if "num_warps" in knobs else {})

    plans = [plan(b), plan(1, w), plan(b, w), plan(b * b, w * w), plan(1, w * w), plan(b * b), plan(1 / b), plan(1, 1 / w)]
    plans += [plan(b, 1, only=n) for n in blocks] + [plan(1 / b, 1, only=n) for n in blocks]
    plans += [{"num_stages": s} for s in knobs.get("num_stages", ()) if s != base.get("num_stages")]
    out: list[tuple[Config, str]] = []
    for config in plans:
        changed = {n: v for n, v in config.items() if v != base[n]}
        if not changed or changed in [c for c, _ in out] or not all(v in knobs[n] for n, v in changed.items()):
            continue
        if not feasible(launch, {**base, **changed}):
            continue
        said = why if "num_stages" not in changed else "deeper software pipelining hides load latency"
        out.append((changed, f"{changes(launch, {**base, **changed})}: {said}"))
    return out


def observed(launch: Launch, measured: Measured) -> Launch:
    """``launch`` with the values its knobs ran with where the cell computes them (a block size from the input's
    size, an autotuner's choice): as the screen saw the original run."""
    ran = measured.launched.get(launch.kernel, {})
    for name, knob in launch.knobs.items():
        if name in ran and (knob.value is None or knob.pinned):
            knob.value = int(ran[name])
    return launch


#: bottleneck kinds a CUDA transformation answers although launch parameters do not (cuda.py)
CUDA_FIXES = frozenset({"shared_bank_conflicts"})


Key = tuple[tuple[str, int], ...]


def _key(config: Config) -> Key:
    return tuple(sorted(config.items()))


def _unique(configs: list[Config]) -> list[Config]:
    return list({_key(c): c for c in configs}.values())


@dataclass
class _Walk:
    """One explore's local search: where it stands, what it has measured, where it may start again."""

    launch: Launch
    source: str  # the version it starts from
    kind: str  # the bottleneck whose guidance orders the moves
    start: Config
    times: dict[Key, float | None] = field(default_factory=dict)
    looked: set[Key] = field(default_factory=set)  # the places looked around
    places: list[Config] = field(default_factory=list)  # places to start again from
    here: Config = field(default_factory=dict)
    fresh: bool = True  # ``here`` is a place to start from, not measured yet

    def variant(self, config: Config) -> str:
        return apply(self.source, self.launch, delta(self.launch, config))

    def around(self) -> list[Config]:
        """The neighbourhood of ``here``; the first also holds the places fast kernels of this kind usually are (a
        start far from them, 16x16 tiles and one warp, would take many small steps to get there)."""
        ahead = self.places if self.here is self.start else []
        return _unique(ahead + neighbours(self.launch, self.here, self.kind))

    def move(self, around: list[Config]) -> tuple[bool, Config | None]:
        """(go on, a local optimum found here): to the fastest neighbour when it is faster, else to a place not yet
        looked around; a neighbourhood measured whole with nothing faster makes ``here`` a local optimum."""
        timed = [(ms, c) for c in around if (ms := self.times.get(_key(c))) is not None]
        here_ms = self.times.get(_key(self.here))
        fastest = min(timed, key=lambda t: t[0], default=None)
        if fastest is not None and here_ms is not None and fastest[0] < 0.99 * here_ms:
            self.here, self.fresh = fastest[1], False
            return True, None
        optimum = self.here if here_ms is not None and all(_key(c) in self.times for c in around) else None
        unseen = [p for p in self.places if _key(p) not in self.looked]
        if not unseen:
            return False, optimum
        self.here = unseen[0]
        self.fresh = _key(self.here) not in self.times
        return True, optimum


@dataclass
class SearchRewriter:
    """Proposes launch-parameter variants (Triton) and known transformations (CUDA)."""

    name: str = "search"
    tried: set[str] = field(default_factory=set)
    measured: dict[str, float | None] = field(default_factory=dict)  # screen times by the variant's source, all rounds
    optimum: tuple[str, float, Config] | None = None  # the fastest place whose neighbourhood held nothing faster

    @classmethod
    def from_settings(cls, settings: Settings, say: Callable[[str], None]) -> SearchRewriter:
        return cls()

    @property
    def cannot_fix(self) -> frozenset[str]:
        """Kinds whose fix changes what the code does (access pattern, control flow, instructions): the rules
        that give the search no direction, less those a CUDA transformation answers."""
        return frozenset(kinds()) - set(search_guidance()) - CUDA_FIXES

    def why_nothing(self, source: str) -> str | None:
        """The CUDA launches whose block size cannot be read, with their lines; the Triton launches' knobs that
        cannot change, with why."""
        try:
            found = launches(source)
        except SyntaxError:
            found = []
        said = cuda.unreadable(source) + [describe(launch) for launch in found if launch.notes]
        return "; ".join(said) or None

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

    def explore(self, context: RewriteContext, measure: Measure, *, n: int, budget_s: float, most: int) -> Explored:
        """Local search over the launch parameters of the top bottleneck's kernel, with quick measurements:
        measure a neighbourhood (the first one with the places fast kernels of this kind usually are:
        :func:`restarts`), move to its fastest, and when none is faster start again from one of those places not yet
        looked around, until ``most`` variants are measured or ``budget_s`` is spent. A variant measured by an
        earlier explore (the same screen's input) is not measured again; the start always is (its time is the
        fastest it was seen at, so that one slow reading does not make every neighbour look faster). The ``n``
        fastest variants that beat the start come back, fastest first. A start that runs within SETTLED of the fastest
        place found so far whose neighbourhood held nothing faster is not looked around (``settled`` says so).
        Knobs set at run time (from the input's size, by an autotuner) take the values the screen saw the start run
        with. Cells without a Triton launch: :meth:`propose`."""
        top = dict(context.bottlenecks[0]) if context.bottlenecks else {"kind": "latency_bound"}
        found = [interpreted(x) if context.interpreted else x for x in launches(context.source)]
        name = str(top.get("kernel", ""))  # the profile's name, which may carry more than the source's
        launch = next((x for x in found if x.kernel == name), None)
        launch = launch or next((x for x in found if x.kernel in name), found[0] if found else None)
        if launch is None:
            return Explored(tuple(self.propose(context, n)))
        notes = tuple(describe(x) for x in found if x.notes)
        if (settled := self._settled(context.source)) is not None:
            return Explored(settled=settled, notes=notes)
        if any(k.tunable and k.value is None for k in launch.knobs.values()):
            observed(launch, measure([]))  # the start's own run says what its computed knobs came to
        if not space(launch):
            return Explored(notes=(*notes, f"{launch.kernel}: no launch parameter can change"))
        walk = _Walk(launch, context.source, top["kind"], current(launch), places=restarts(launch))
        walk.here = walk.start
        unrun: list[str] = []
        screened, recalled = self._walk(walk, measure, budget_s, most, unrun)
        return Explored(self._best(walk, top["kind"], n), screened, recalled, notes=notes, unrun=tuple(unrun))

    def _walk(self, walk: _Walk, measure: Measure, budget_s: float, most: int, unrun: list[str]) -> tuple[int, int]:
        """Measure and move until ``most`` variants are measured, ``budget_s`` is spent or no place is left:
        (variants measured, variants recalled from earlier explores); why each measured one has no time, into
        ``unrun``."""
        started, screened, recalled = time.monotonic(), 0, 0
        while screened < most and time.monotonic() - started < budget_s:
            walk.looked.add(_key(walk.here))
            around = walk.around()
            batch = [walk.here] * walk.fresh + [c for c in around if _key(c) not in walk.times]
            known = [c for c in batch if walk.variant(c) in self.measured and c != walk.start]
            new = [c for c in batch if c not in known][: most - screened]
            if new or known:
                texts = [walk.variant(c) for c in new]
                got = measure(texts) if texts else Measured()
                screened, recalled = screened + len(new), recalled + len(known)
                unrun += [why or "no time" for ms, why in zip(got.times, got.reasons or [""] * len(got.times)) if ms is None]
                for text, ms in zip(texts, got.times):
                    seen = [t for t in (ms, self.measured.get(text)) if t is not None]
                    self.measured[text] = min(seen, default=None)
                walk.times.update({_key(c): self.measured[walk.variant(c)] for c in new + known})
                if walk.times.get(_key(walk.start)) is None:
                    break  # the version itself does not run in the screen: nothing to compare with
            going, optimum = walk.move(around)
            ms = walk.times[_key(optimum)] if optimum is not None else None
            if optimum is not None and ms is not None and (self.optimum is None or ms < self.optimum[1]):
                self.optimum = (walk.variant(optimum), ms, optimum)
            if not going:
                break
        return screened, recalled

    def _best(self, walk: _Walk, kind: str, n: int) -> tuple[Candidate, ...]:
        """The ``n`` fastest variants measured that beat the start by 1% or more, fastest first."""
        start_ms = walk.times.get(_key(walk.start))
        ranked = sorted(((ms, dict(k)) for k, ms in walk.times.items() if ms is not None), key=lambda t: t[0])
        out: list[Candidate] = []
        for ms, config in ranked:
            if start_ms is None or ms >= 0.99 * start_ms or len(out) == n:
                break
            text = walk.variant(config)
            if text not in self.tried:
                said = (
                    f"{walk.launch.kernel}: {changes(walk.launch, config)}: {ms:.3f} ms against {start_ms:.3f} ms in the screen"
                )
                out.append(Candidate(text, f"{said}.", kind, "search", {"config": config, "screen_ms": ms}))
        self.tried.update(c.source for c in out)
        return tuple(out)

    def _settled(self, start: str) -> str | None:
        """Why ``start``, screened in an earlier explore, need not be looked around: it runs within SETTLED of the
        fastest place whose whole neighbourhood was screened and held nothing faster (another place: its own
        neighbours were not all screened). Looking around it would measure configurations that differ from that
        optimum by the screen's noise: the search is done. None when it must be looked around."""
        known = self.measured.get(start)
        if self.optimum is None or known is None or start == self.optimum[0] or known > SETTLED * self.optimum[1]:
            return None
        config = ", ".join(f"{name} {value}" for name, value in self.optimum[2].items())
        return (
            f"runs within {SETTLED - 1:.0%} of the fastest launch configuration screened ({config}: "
            f"{self.optimum[1]:.3f} ms against {known:.3f} ms), around which nothing was faster"
        )


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
