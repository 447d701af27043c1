"""Which inputs the judge tries: the cell's declared shapes and distribution, and what a candidate has
never seen.

* **Secret seeds**, fresh for every judge (one session), so no candidate can replay them at import.
* **Declared shapes** (``SHAPES``, else ``make_inputs``' integer defaults), ``seeds`` input sets each.
* **Odd shapes** around each declared one whenever ``make_inputs`` takes sizes: every size made odd (one
  above, one below), so no size is a multiple of any power of two; a kernel without a tail mask shows.
* **Value variants** of the declared distribution: large (x100: overflow in unsafe formulations, caps such
  as ReLU6's), small (x0.001), shifted negative (x - 3), a large common offset (x + 1000: catastrophic
  cancellation, as in a one-pass variance) and mixed magnitudes (each element scaled by 10^k, k in -3..3).
* **Layouts** the reference accepts: every tensor input handed over as a non-contiguous view with the same
  values, every other element of a twice-as-wide buffer (``strided``), or column-major (``transposed``,
  tensors of two dimensions or more); the gaps hold NaN bytes. A set whose reference answer differs from its
  answer on the contiguous inputs (a reference that assumes contiguous inputs) is skipped, saying so.
* **Timing sets**, fresh seeds again per declared shape, rotated through the timed calls.

Where the reference itself fails or gives NaN/inf on an odd shape, a variant or a layout (it is not defined
there), that input set is skipped and the verdict says so.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any

#: variant -> (scale, shift) applied to the floating-point inputs of the declared distribution ("mixed": the
#: scale is 10^k per element, k drawn from -3..3)
VARIANTS: dict[str, tuple[float, float]] = {
    "large": (100.0, 0.0),
    "small": (1e-3, 0.0),
    "negative": (1.0, -3.0),
    "offset": (1.0, 1000.0),
    "mixed": (1.0, 0.0),
}
VARIANT_WORDS = {
    "large": "values x100",
    "small": "values x0.001",
    "negative": "values shifted by -3",
    "offset": "values shifted by +1000",
    "mixed": "mixed magnitudes (x10^-3 to x10^3)",
}
LAYOUT_WORDS = {"strided": "inputs strided (every other element)", "transposed": "inputs column-major"}
TIMING_SEEDS = 2  # fresh input sets per declared shape, rotated through the timed calls


@dataclass(frozen=True)
class InputSet:
    """One set of inputs: ``make_inputs(*shape)`` under a secret seed, maybe scaled or shifted."""

    id: int
    shape: tuple[Any, ...]
    seed: int
    variant: str = ""  # "" (the declared distribution) or a key of VARIANTS
    layout: str = ""  # "" (contiguous) or a key of LAYOUT_WORDS
    declared: bool = True  # a shape the cell declares (the reference must work there)
    timing: bool = False  # rotated through the timed calls rather than checked alone

    def describe(self, shown: bool = True) -> str:
        """'shape (1001,), values x100' (without the secret seed)."""
        parts = [f"shape {self.shape}" if shown and self.shape else ""]
        if not self.declared:
            parts.append("an odd shape the cell does not declare")
        if self.variant:
            parts.append(VARIANT_WORDS[self.variant])
        if self.layout:
            parts.append(LAYOUT_WORDS[self.layout])
        return ", ".join(p for p in parts if p) or "the declared inputs"

    @property
    def optional(self) -> bool:
        """Whether the reference may be undefined here (the set is then skipped): all but the declared inputs."""
        return bool(self.variant or self.layout or not self.declared)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "shape": list(self.shape),
            "seed": self.seed,
            "variant": self.variant,
            "layout": self.layout,
            "timing": self.timing,
        }


def odd_shapes(shape: tuple[Any, ...]) -> list[tuple[Any, ...]]:
    """Shapes near ``shape`` whose every integer size is odd: one above and one below (at least 1)."""

    def above(n: int) -> int:
        return n + 1 if n % 2 == 0 else n + 2

    def below(n: int) -> int:
        return max(1, n - 1 if n % 2 == 0 else n - 2)

    ints = [i for i, v in enumerate(shape) if isinstance(v, int) and not isinstance(v, bool)]
    if not ints:
        return []
    out = []
    for move in (above, below):
        moved = tuple(move(v) if i in ints else v for i, v in enumerate(shape))
        if moved != shape and moved not in out:
            out.append(moved)
    return out


def plan(declared: list[tuple[Any, ...]], seeds: int, sizes_known: bool) -> list[InputSet]:
    """Every input set of one judge, with fresh secret seeds (see the module docstring)."""
    sets: list[InputSet] = []

    def add(shape: tuple[Any, ...], **kw: Any) -> None:
        sets.append(InputSet(len(sets), shape, secrets.randbelow(2**31), **kw))

    for shape in declared:
        for _ in range(seeds):
            add(shape)
    if sizes_known:
        for shape in declared:
            for odd in odd_shapes(shape):
                if odd not in declared:
                    add(odd, declared=False)
    for variant in VARIANTS:
        add(declared[0], variant=variant)
    for layout in LAYOUT_WORDS:
        add(declared[0], layout=layout)
    for shape in declared:
        for _ in range(TIMING_SEEDS):
            add(shape, timing=True)
    return sets
