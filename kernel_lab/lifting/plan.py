"""How a lifted cell writes a recorded launch: each tensor made by ``make_inputs`` (one input per storage; a view of
a wider tensor cut from its storage in ``run``), each argument written in the cell's sizes, the grid, and the
lines of ``run`` that compute the sizes from its tensors. Where something cannot be written in the sizes,
:func:`plan` says so (None) and the cell is written at the recorded sizes instead.
"""

from __future__ import annotations

import ast
import math
import re
from dataclasses import dataclass, field
from typing import Any

from kernel_lab.lifting import source as src
from kernel_lab.lifting.sizes import Sizes
from kernel_lab.models import DTYPE_BYTES, LaunchRecord, TensorRecord


@dataclass
class Made:
    """One input of ``make_inputs``: a tensor as recorded, or a storage that ``run`` cuts views from."""

    name: str
    record: TensorRecord
    views: list[tuple[str, TensorRecord]] = field(default_factory=list)  # (variable, view) cut in run; [] if plain


@dataclass
class Plan:
    inputs: list[Made]
    args: dict[str, str]  # kernel parameter -> how run() passes it
    grid: str
    derive: list[str]  # run's lines computing the sizes from its tensors
    cut: list[str]  # run's lines cutting views from storages
    make: list[str]  # make_inputs' lines
    sizes: Sizes
    extent: bool = False  # a storage is sized for its views: the cell needs _extent


def _contiguous(t: TensorRecord) -> bool:
    expected: list[int] = []
    step = 1
    for n in reversed(t.shape):
        expected.insert(0, step)
        step *= n
    return t.offset == 0 and all(s == e for s, e, n in zip(t.strides, expected, t.shape) if n > 1)


def tuple_of(items: list[str]) -> str:
    """A tuple's text: '(a,)', '(a, b)'."""
    return f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"


def _number(value: Any) -> str:
    if isinstance(value, float) and not math.isfinite(value):
        return f'float("{value}")'
    return repr(value)


def _dtype(name: str) -> str:
    return "BF16" if name == "bfloat16" else f"torch.{name}"


def _fill(dims: list[str], dtype: str) -> str:
    """A tensor of random values of ``dtype``: normal floats, 0 and 1 for integers, half true for bools."""
    shape = tuple_of(dims) if dims else "()"
    if dtype == "bool":
        return f"torch.rand({shape}, device=DEVICE) < 0.5"
    if dtype.startswith(("int", "uint")):
        return f"torch.randint(0, 2, {shape}, dtype=torch.{dtype}, device=DEVICE)"
    if dtype.startswith("float8"):
        return f"torch.randn({shape}, device=DEVICE).to(torch.{dtype})"
    return f"torch.randn({shape}, dtype={_dtype(dtype)}, device=DEVICE)"


def _inputs(tensors: dict[str, TensorRecord]) -> tuple[list[Made], dict[str, str]]:
    """One input per storage (and dtype): the tensor itself when it is the storage's only view and is contiguous,
    else the storage, with its views cut in run(); arguments recorded alike share a tensor."""
    groups: dict[tuple[int, str], list[tuple[str, TensorRecord]]] = {}
    for name, t in tensors.items():
        groups.setdefault((t.storage, t.dtype), []).append((name, t))
    made, passed = [], {}
    for members in groups.values():
        distinct: dict[TensorRecord, str] = {}  # each view, by the first argument recorded so
        for name, t in members:
            distinct.setdefault(t, name)
        first_name, first = members[0]
        if len(distinct) == 1 and _contiguous(first):
            made.append(Made(first_name, first))
            passed.update({n: first_name for n, _ in members})
            continue
        views = {t: f"{n}_view" if n == first_name else n for t, n in distinct.items()}
        made.append(Made(f"{first_name}_storage", first, [(v, t) for t, v in views.items()]))
        passed.update({n: views[t] for n, t in members})
    return made, passed


def _derive(made: list[Made], used: set[str], sizes: Sizes) -> list[str] | None:
    """run()'s lines computing the sizes it uses from its tensors' shapes; None when one is only in a view."""
    lines, bound = [], set()
    for m in made:
        if m.views:
            continue
        dims = sizes.dims(m.record.shape)
        new = [d for d in dims if d in used and d not in bound and d.isidentifier()]
        if not new:
            continue
        if dims == new and len(set(dims)) == len(dims):
            lines.append(f"{', '.join(dims)}{',' if len(dims) == 1 else ''} = {m.name}.shape")
        else:
            lines += [f"{d} = {m.name}.shape[{dims.index(d)}]" for d in dict.fromkeys(new)]
        bound |= set(new)
    return lines if used <= bound else None


def plan_of(fn: ast.FunctionDef, launch: LaunchRecord, sizes: Sizes, grid: tuple[int, ...], counts: list[int]) -> Plan | None:
    """How make_inputs and run write this launch in ``sizes``; None when something cannot be written in them."""
    named = dict(launch.args)
    tensors = {n: v for n, v in named.items() if isinstance(v, TensorRecord)}
    made, passed = _inputs(tensors)
    constexprs, params = set(src.constexprs(fn)), src.params(fn)
    args: dict[str, str] = {}
    for name, value in named.items():
        if name in tensors:
            args[name] = passed[name]
        elif name in constexprs or name not in params:  # constexprs and launch options: as recorded
            args[name] = _number(value)
        else:
            args[name] = sizes.write(value) or _number(value)
    blocks = {n: v for n, v in named.items() if n in constexprs}
    entries = [sizes.grid(g, blocks, counts) for g in grid]
    if any(e is None for e in entries):
        return None
    grid_text = tuple_of([e or "" for e in entries])
    grid_text = f"lambda META: {grid_text}" if "META" in grid_text else grid_text
    lines = _making(made, sizes)
    if lines is None:
        return None
    make, cut = lines
    used = {n for n in sizes.symbols if n in _words(" ".join([*args.values(), grid_text, *cut]))}
    derive = _derive(made, used, sizes)
    if derive is None:
        return None
    return Plan(made, args, grid_text, derive, cut, make, sizes, extent=bool(cut))


def _making(made: list[Made], sizes: Sizes) -> tuple[list[str], list[str]] | None:
    """make_inputs' lines making each input, and run's lines cutting views from storages; None when a view's
    strides or offset cannot be written in ``sizes``."""
    make, cut = [], []
    for m in made:
        if not m.views:
            make.append(f"{m.name} = {_fill(sizes.dims(m.record.shape), m.record.dtype)}")
            continue
        specs = []
        for variable, view in m.views:
            strides = [sizes.write(s) for s in view.strides]
            offset = sizes.write(view.offset // _itemsize(view))
            if offset is None or any(s is None for s in strides):
                return None
            spec = f"{tuple_of(sizes.dims(view.shape))}, {tuple_of([s or '' for s in strides])}, {offset}"
            specs.append(f"({spec})")
            cut.append(f"{variable} = torch.as_strided({m.name}, {spec})")
        make.append(f"{m.name} = {_fill(['_extent(' + ', '.join(specs) + ')'], m.record.dtype)}")
    return make, cut


def _itemsize(t: TensorRecord) -> int:
    return DTYPE_BYTES.get(t.dtype, 4)


def _words(text: str) -> set[str]:
    return set(re.findall(r"[A-Za-z_]\w*", text))
