"""Known source transformations for CUDA C++ kernels in a cell (``load_inline`` sources).

Each function takes the whole cell and returns rewritten cells with a reason; none of them knows
whether the result is faster or even correct: the judge decides. They work on the CUDA text by
pattern, so they only touch what they recognise:

- :func:`pad_shared_tiles`: ``__shared__ float t[T][T]`` → ``[T][T + 1]`` (bank conflicts).
- :func:`block_sizes`: the threads per block of a ``kernel<<<grid, block>>>`` launch, through the
  ``#define``/``constexpr`` constant the block is spelled with (so the grid and the kernel follow),
  through the literals of a ``dim3 block(8, 8)`` it names (all sides, or x alone), or through a literal
  (every equal literal in the launch and in the kernel's ``__launch_bounds__``). :func:`unreadable` says
  which launches none of these reaches, and why.
- :func:`launch_bounds`: ``__launch_bounds__(threads, min_blocks)`` so the compiler caps registers
  per thread and more blocks fit on an SM (register-limited occupancy).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

MAX_THREADS = 1024  # per block
SM_THREADS = 2048  # resident threads per SM (sm_70 .. sm_90)

_SHARED_TILE = re.compile(r"(__shared__\s+\w+\s+\w+\s*\[\s*([^\]]+?)\s*\]\s*\[\s*)([^\]+]+?)(\s*\])")
_CONSTANT = r"(?:#define\s+{name}\s+|(?:static\s+)?(?:constexpr|const)\s+(?:unsigned\s+)?int\s+{name}\s*=\s*)\(?(\d+)\)?"
_LAUNCH = re.compile(r"\b(\w+)\s*<<<(.+?)>>>", re.S)
_BOUNDS = r"(__launch_bounds__\s*\(([^)]*)\))"
_DIM3 = r"\bdim3\s+{name}\s*(?:\(|\{{|=\s*(?:dim3\s*)?[({{])([^;(){{}}]*)[)}}]\s*;"


@dataclass(frozen=True)
class Launch:
    """One ``kernel<<<grid, block, ...>>>`` in the cell."""

    kernel: str
    start: int  # span of the ``<<<...>>>`` text
    end: int
    args: tuple[str, ...]

    @property
    def block(self) -> str:
        return self.args[1] if len(self.args) > 1 else ""


def _split_args(text: str) -> tuple[str, ...]:
    """Top-level comma-separated arguments."""
    out, depth, current = [], 0, ""
    for ch in text:
        depth += (ch in "([{") - (ch in ")]}")
        if ch == "," and depth == 0:
            out.append(current.strip())
            current = ""
        else:
            current += ch
    return (*out, current.strip())


def cuda_launches(source: str) -> list[Launch]:
    return [Launch(m.group(1), m.start(2), m.end(2), _split_args(m.group(2))) for m in _LAUNCH.finditer(source)]


def _constant(source: str, name: str) -> re.Match | None:
    return re.search(_CONSTANT.format(name=re.escape(name)), source)


def _dim3(source: str, name: str) -> re.Match | None:
    """``dim3 name(8, 8);`` (or ``= dim3(...)``, ``{...}``): group 1 is what is inside."""
    return re.search(_DIM3.format(name=re.escape(name)), source)


def threads(block: str, source: str) -> int | None:
    """Threads per block of a launch's block argument, when it is made of literals, constants and dim3
    variables of them."""
    expr = re.sub(r"\bdim3\s*\(", "(", block)
    for _ in range(3):  # a dim3 variable's sides may be constants
        for name in set(re.findall(r"\b[A-Za-z_]\w*\b", expr)):
            if (found := _constant(source, name)) is not None:
                expr = re.sub(rf"\b{name}\b", found.group(1), expr)
            elif (sides := _dim3(source, name)) is not None:
                expr = re.sub(rf"\b{name}\b", f"({sides.group(1)})", expr)
            else:
                return None
    if not re.fullmatch(r"[\d\s()*+\-/,]+", expr):
        return None
    try:
        value = eval(expr.replace("/", "//"), {"__builtins__": {}})  # digits and operators only
    except (SyntaxError, ZeroDivisionError, TypeError):
        return None
    return math.prod(value) if isinstance(value, tuple) else int(value)


def _kernel_bounds(source: str, kernel: str) -> re.Match | None:
    return re.search(rf"__global__\s+(?:static\s+)?void\s+{_BOUNDS}\s*{re.escape(kernel)}\s*\(", source)


def block_sizes(source: str, direction: int = +1) -> list[tuple[str, str]]:
    """Cells with each launch's block size scaled (×2, ×4, ÷2, ÷4; ``direction`` says which come first)."""
    factors = (2, 4, 0.5, 0.25) if direction >= 0 else (0.5, 0.25, 2, 4)
    out: list[tuple[str, str]] = []
    for index, launch in enumerate(cuda_launches(source)):
        now = threads(launch.block, source)
        if now is None:
            continue
        names = [n for n in dict.fromkeys(re.findall(r"\b[A-Za-z_]\w*\b", launch.block)) if n != "dim3"]
        if len(names) == 1 and (sides := _dim3(source, names[0])) is not None:
            inside = list(dict.fromkeys(re.findall(r"\b[A-Za-z_]\w*\b", sides.group(1))))
            if not inside:
                out += _dim3_sides(source, launch, names[0], sides, now, factors)
                continue
            names = inside  # the constants the dim3 is made of
        literals = [] if names else list(dict.fromkeys(re.findall(r"\b\d+\b", launch.block)))
        for knob in names + literals:
            found = _constant(source, knob) if knob in names else None
            if knob in names and found is None:
                continue
            old = int(found.group(1)) if found is not None else int(knob)
            for factor in factors:
                new = int(old * factor)
                rewritten = _set_knob(source, launch, knob, old, new, is_name=knob in names)
                after = threads(cuda_launches(rewritten)[index].block, rewritten)
                if new < 1 or after is None or not 32 <= after <= MAX_THREADS or rewritten == source:
                    continue
                why = f"{launch.kernel}: {knob if knob in names else 'block size'} {old} → {new} ({now} → {after} threads per block)"
                out.append((rewritten, why))
    return out


def _dim3_sides(
    source: str, launch: Launch, name: str, sides: re.Match, now: int, factors: tuple[float, ...]
) -> list[tuple[str, str]]:
    """Cells with the literal sides of ``dim3 name(x, y, ...)`` scaled: all sides, then x alone."""
    old = [int(v) for v in sides.group(1).split(",")]
    out: list[tuple[str, str]] = []
    seen = {tuple(old)}
    for factor in factors:
        for new in ([int(v * factor) for v in old], [int(old[0] * factor), *old[1:]]):
            count = math.prod(new)
            if tuple(new) in seen or min(new) < 1 or not 32 <= count <= MAX_THREADS:
                continue
            seen.add(tuple(new))
            rewritten = source[: sides.start(1)] + ", ".join(map(str, new)) + source[sides.end(1) :]
            why = f"{launch.kernel}: {name} {tuple(old)} → {tuple(new)} ({now} → {count} threads per block)"
            out.append((rewritten, why))
    return out


def unreadable(source: str) -> list[str]:
    """Launches whose block size cannot be read (so the search cannot vary it): line, launch, why."""
    out = []
    for launch in cuda_launches(source):
        if threads(launch.block, source) is None:
            line = source.count("\n", 0, launch.start) + 1
            out.append(
                f"line {line}: {launch.kernel}<<<...>>> gives its block as {launch.block or 'nothing'!r}, which is not"
                " made of literals, #define/constexpr constants or a dim3 of them (spell it so to let the"
                " search vary it)"
            )
    return out


def _set_knob(source: str, launch: Launch, knob: str, old: int, new: int, *, is_name: bool) -> str:
    if is_name:
        found = _constant(source, knob)
        assert found is not None  # block_sizes only names constants it found
        return source[: found.start(1)] + str(new) + source[found.end(1) :]
    word = rf"\b{old}\b"
    bounds = _kernel_bounds(source, launch.kernel)
    edits = [(launch.start, launch.end, re.sub(word, str(new), source[launch.start : launch.end]))]
    if bounds is not None:
        edits.append((bounds.start(2), bounds.end(2), re.sub(rf"^\s*{old}\b", str(new), bounds.group(2))))
    for start, end, text in sorted(edits, reverse=True):
        source = source[:start] + text + source[end:]
    return source


def launch_bounds(source: str, blocks_now: int | None = None, *, relax: bool = False) -> list[tuple[str, str]]:
    """Cells whose launched kernels ask, through ``__launch_bounds__``, for more resident blocks per SM
    (fewer registers per thread), or with ``relax`` for fewer (more registers, against spills)."""
    out: list[tuple[str, str]] = []
    for launch in cuda_launches(source):
        count = threads(launch.block, source)
        if count is None:
            continue
        most = SM_THREADS // count
        bounds = _kernel_bounds(source, launch.kernel)
        if relax:
            asked = _split_args(bounds.group(2)) if bounds is not None else ()
            now = int(asked[1]) if len(asked) > 1 and asked[1].isdigit() else 1
            wanted = sorted({b for b in (now // 2, 1) if b < now}, reverse=True)
        else:
            floor = blocks_now or max(1, most // 4)
            wanted = sorted({b for b in (2 * floor, 4 * floor, most) if floor < b <= most})
        for blocks in wanted:
            spec = f"__launch_bounds__({count}, {blocks})" if blocks > 1 else f"__launch_bounds__({count})"
            if bounds is not None:
                rewritten = source[: bounds.start(1)] + spec + source[bounds.end(1) :]
            else:
                head = re.search(rf"__global__\s+(?:static\s+)?void\s+(?={re.escape(launch.kernel)}\s*\()", source)
                if head is None:
                    continue
                rewritten = source[: head.end()] + spec + " " + source[head.end() :]
            cap = min(255, 65536 // (count * blocks)) // 8 * 8
            why = f"{launch.kernel}: {spec}: up to about {cap} registers per thread" + (
                f", so {blocks} blocks of {count} threads fit on an SM" if blocks > 1 else ", no minimum of resident blocks"
            )
            out.append((rewritten, why))
    return out


def pad_shared_tiles(source: str) -> str | None:
    """Pad every unpadded 2-D ``__shared__`` tile by one column, or None if there is none."""
    padded, count = _SHARED_TILE.subn(lambda m: f"{m.group(1)}{m.group(3)} + 1{m.group(4)}", source)
    return padded if count else None
