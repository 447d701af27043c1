"""Known source transformations for CUDA C++ kernels in a cell (``load_inline`` sources).

Each function takes the whole cell and returns rewritten cells with a reason; none of them knows
whether the result is faster or even correct: the judge decides. They work on the CUDA text by
pattern, so they only touch what they recognise:

- :func:`pad_shared_tiles`: ``__shared__ float t[T][T]`` → ``[T][T + 1]`` (bank conflicts).
- :func:`block_sizes`: the threads per block of a ``kernel<<<grid, block>>>`` launch, through the
  ``#define``/``constexpr`` constant the block is spelled with (so the grid and the kernel follow),
  or through a literal (every equal literal in the launch and in the kernel's ``__launch_bounds__``).
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


def threads(block: str, source: str) -> int | None:
    """Threads per block of a launch's block argument, when it is made of literals and constants."""
    expr = re.sub(r"\bdim3\s*\(", "(", block)
    for name in set(re.findall(r"\b[A-Za-z_]\w*\b", expr)):
        found = _constant(source, name)
        if found is None:
            return None
        expr = re.sub(rf"\b{name}\b", found.group(1), expr)
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
