"""The sizes of a recorded launch, named, and its integers written in them.

A lifted cell's ``make_inputs`` takes the sizes its tensors are made of (each distinct dimension of the
recorded tensors is one size, named after the launch's integer argument that equals it, such as ``n_cols``, else
``size0``, ``size1``...), and its ``run`` computes from them what the library computed: strides, element counts,
the grid. :meth:`Sizes.write` writes a recorded integer as one of them, a product of them (a tensor's element
count) or a small multiple (a row stride of a sliced tensor); :meth:`Sizes.grid` writes a grid entry as a size or
``triton.cdiv(n, META["BLOCK"])`` over a block-size constexpr, so that the grid follows the block when
``%%optimize`` changes it. Where sizes cannot vary (see :class:`Sizes`), everything is written as recorded
except the grid's division by a block.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from kernel_lab.models import TensorRecord

MULTIPLES = range(2, 17)  # c x size: a stride of a tensor sliced out of a wider one


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


@dataclass(frozen=True)
class Sizes:
    """Named sizes (name -> recorded value, in the order they first appear). ``vary``: the cell's ``make_inputs``
    takes them and the launch is written in them; else the cell runs at the recorded sizes only."""

    symbols: Mapping[str, int]
    vary: bool = True

    @classmethod
    def of(cls, tensors: Iterable[TensorRecord], scalars: Mapping[str, Any], vary: bool = True) -> Sizes:
        """The sizes of ``tensors``' dimensions (those above 1), named after the first of ``scalars`` (the launch's
        integer arguments that are not constexprs) equal to each, a stride's name last."""
        values = list(dict.fromkeys(d for t in tensors for d in t.shape if d > 1))
        named = sorted(scalars.items(), key=lambda kv: "stride" in kv[0].lower())
        symbols: dict[str, int] = {}
        unnamed = itertools.count()
        for value in values:
            name = next((n for n, v in named if _is_int(v) and v == value and n not in symbols), None)
            symbols[name or f"size{next(unnamed)}"] = value
        return cls(symbols, vary)

    def fixed(self) -> Sizes:
        return Sizes(self.symbols, vary=False)

    def _table(self, multiples: bool) -> dict[int, str]:
        """Recorded value -> how it is written: a size, then products of two and three, then multiples."""
        table: dict[int, str] = {}
        names = list(self.symbols)
        for count in (1, 2, 3):
            for combo in itertools.combinations_with_replacement(names, count):
                table.setdefault(math.prod(self.symbols[n] for n in combo), " * ".join(combo))
        if multiples:  # the smallest factor first: 32 is 2 * 16 before it is 4 * 8
            for c in MULTIPLES:
                for value, written in list(table.items()):
                    table.setdefault(c * value, f"{c} * {written}")
        return table

    def write(self, value: Any, multiples: bool = True) -> str | None:
        """How the cell writes a recorded integer: a literal for 0 and 1 and where sizes do not vary, else in
        sizes; None for what is not an integer or cannot be written in sizes."""
        if not _is_int(value):
            return None
        if value in (0, 1) or not self.vary:
            return str(value)
        return self._table(multiples).get(value)

    def dims(self, shape: Iterable[int]) -> list[str]:
        return [self.write(d, multiples=False) or str(d) for d in shape]

    def grid(self, value: int, blocks: Mapping[str, int], counts: Iterable[int]) -> str | None:
        """A grid entry: a size (or a product of them), else ``triton.cdiv(n, META["B"])`` for a block-size
        constexpr ``B`` and ``n`` one of ``counts`` (the launch's integers, element counts first), else a literal
        where sizes do not vary; None when it cannot be written in sizes."""
        if value == 1:
            return "1"
        if self.vary and (direct := self._table(False).get(value)) is not None:
            return direct
        numerators = list(dict.fromkeys([*counts, *self._table(False)]))
        for name, block in blocks.items():
            if not _is_int(block) or block < 2:
                continue
            for n in numerators:
                if _is_int(n) and n > 1 and -(-n // block) == value and (written := self.write(n, multiples=False)):
                    return f'triton.cdiv({written}, META["{name}"])'
        return None if self.vary else str(value)

    def cpu(self, largest: int) -> dict[str, int]:
        """The sizes on the CPU: each at most ``largest`` (Triton's interpreter runs a program at a time)."""
        return {name: min(value, largest) for name, value in self.symbols.items()}
