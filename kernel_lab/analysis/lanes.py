"""How a Triton kernel's values vary across the lanes of a block, read from its source (no GPU, no compiler).

An abstract interpretation of the kernel's body: each expression gets a :class:`Value` saying, per block axis,
how far apart neighbouring lanes' values are (their *stride*: a number of elements, 1 for ``tl.arange``, ``slow``
for ``offs // n``, whose neighbours mostly share a value, ``row`` for an index multiplied by a value the analysis
does not know), which pointer arguments it derives from, and whether it comes from loaded data. The numbers a launch
passed (a row length, a stride of 1) are known when its record is given. Every ``tl.load``, ``tl.store`` and
``tl.atomic_*`` is recorded as an :class:`Access` with its pointer's and its value's Values.

Enough to say which tensors a kernel reads and writes (:mod:`kernel_lab.analysis.flow`) and where its source
needs a rewrite (:mod:`kernel_lab.analysis.patterns`); anything it cannot follow is ``unknown`` and no reading is
made of it.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace

SLOW, ROW = "slow", "row"
Stride = float | str  # elements between neighbouring lanes, or SLOW, or ROW
LOADS, STORES = ("load",), ("store",)
ATOMICS = ("atomic_add", "atomic_max", "atomic_min", "atomic_and", "atomic_or", "atomic_xor", "atomic_xchg", "atomic_cas")
#: calls whose result has its argument's lanes (casts, hints)
PASS_THROUGH = ("to", "multiple_of", "max_contiguous", "max_constancy", "cast")
REDUCTIONS = ("sum", "max", "min", "reduce", "argmax", "argmin", "xor_sum")


@dataclass(frozen=True)
class Value:
    """What the analysis knows of an expression over the lanes of a block."""

    ndim: int = 0
    axes: Mapping[int, Stride] = field(default_factory=dict)  # axis -> stride between neighbouring lanes
    pointers: frozenset[str] = frozenset()  # pointer arguments it derives from
    data: bool = False  # computed from loaded values
    literal: float | None = None  # its value, for a number written in the source
    unknown: bool = False  # the analysis could not follow it

    @property
    def varies(self) -> bool:
        return bool(self.axes)


@dataclass(frozen=True)
class Access:
    """One memory operation of the kernel: ``op`` (load, store, atomic_add, ...), its line, and its operands."""

    op: str
    line: int
    pointer: Value
    value: Value | None  # the stored or atomically applied value; None for a load
    node: ast.Call

    @property
    def reads(self) -> bool:
        return self.op in LOADS or self.op in ATOMICS

    @property
    def writes(self) -> bool:
        return self.op in STORES or self.op in ATOMICS


def _aligned(v: Value, ndim: int) -> dict[int, Stride]:
    """``v``'s axes once broadcast to ``ndim`` dimensions (trailing axes line up, as in numpy and Triton)."""
    return {a + ndim - v.ndim: s for a, s in v.axes.items()}


def _joined(a: Value, b: Value, axes: dict[int, Stride]) -> Value:
    return Value(max(a.ndim, b.ndim), axes, a.pointers | b.pointers, a.data or b.data, None, a.unknown or b.unknown)


def _sum(s: Stride, t: Stride) -> Stride:
    if ROW in (s, t):
        return ROW
    if s == SLOW:
        return t
    if t == SLOW:
        return s
    return float(s) + float(t)


def add(a: Value, b: Value) -> Value:
    ndim = max(a.ndim, b.ndim)
    axes = _aligned(a, ndim)
    for axis, stride in _aligned(b, ndim).items():
        axes[axis] = _sum(axes[axis], stride) if axis in axes else stride
    return _joined(a, b, {axis: s for axis, s in axes.items() if s != 0})


def _scaled(s: Stride, factor: float | None) -> Stride:
    if s == SLOW:
        return SLOW
    return float(s) * factor if factor is not None and s != ROW else ROW


def multiply(a: Value, b: Value) -> Value:
    if 0 in (a.literal, b.literal):
        return replace(_joined(a, b, {}), literal=0.0)
    if a.varies and b.varies:  # a product of two lane-varying values walks no simple stride
        return replace(_joined(a, b, {}), unknown=True)
    lanes, factor = (a, b) if a.varies else (b, a)
    axes = {axis: _scaled(s, factor.literal) for axis, s in _aligned(lanes, max(a.ndim, b.ndim)).items()}
    literal = a.literal * b.literal if a.literal is not None and b.literal is not None else None
    return replace(_joined(a, b, axes), literal=literal)


def divide(a: Value, b: Value) -> Value:
    """``a // b``: neighbouring lanes share a quotient (the row of a flat index)."""
    if b.varies or b.literal == 1:
        return replace(_joined(a, b, dict(a.axes)), unknown=b.varies or a.unknown)
    return _joined(a, b, {axis: SLOW if s in (1.0, SLOW) else ROW for axis, s in a.axes.items()})


def modulo(a: Value, b: Value) -> Value:
    """``a % b``: runs of consecutive lanes keep their stride (the column of a flat index)."""
    return replace(_joined(a, b, dict(a.axes)), unknown=a.unknown or b.varies)


def subscript(v: Value, index: ast.expr) -> Value:
    """``v[:, None]``, ``v[None, :]``: the same lanes on new axes; any other subscript is not followed."""
    elements = index.elts if isinstance(index, ast.Tuple) else [index]
    mapping, source = {}, 0
    for position, element in enumerate(elements):
        if isinstance(element, ast.Constant) and element.value is None:
            continue
        if not (isinstance(element, ast.Slice) and element.lower is element.upper is element.step is None):
            return replace(v, unknown=True)
        mapping[source] = position
        source += 1
    return replace(v, ndim=len(elements), axes={mapping[a]: s for a, s in v.axes.items() if a in mapping})


def tl_call(node: ast.Call) -> str | None:
    """'load' for ``tl.load(...)`` (or ``triton.language.load``), else None."""
    f = node.func
    if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id in ("tl", "language"):
        return f.attr
    if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Attribute) and f.value.attr == "language":
        return f.attr
    return None


def _shape_ndim(node: ast.expr | None) -> int:
    if isinstance(node, (ast.Tuple, ast.List)):
        return len(node.elts)
    return 1 if node is not None else 0


class Interpreter(ast.NodeVisitor):
    """Walks a kernel's body in order, binding names to Values and recording its memory accesses."""

    def __init__(self, fn: ast.FunctionDef, tensors: Iterable[str], numbers: Mapping[str, float] | None = None) -> None:
        tensors, numbers = set(tensors), numbers or {}
        self.env: dict[str, Value] = {
            a.arg: Value(pointers=frozenset({a.arg}) if a.arg in tensors else frozenset(), literal=numbers.get(a.arg))
            for a in fn.args.args
        }
        self.accesses: list[Access] = []
        for statement in fn.body:
            self.visit(statement)

    # statements ------------------------------------------------------------------------------------------------
    def _bind(self, target: ast.expr, value: Value, node: ast.expr | None = None) -> None:
        if isinstance(target, ast.Name):
            self.env[target.id] = value
        elif isinstance(target, (ast.Tuple, ast.List)):
            parts = node.elts if isinstance(node, (ast.Tuple, ast.List)) and len(node.elts) == len(target.elts) else None
            for i, element in enumerate(target.elts):
                self._bind(element, self.eval(parts[i]) if parts else replace(value, unknown=True))

    def visit_Assign(self, node: ast.Assign) -> None:
        if isinstance(node.value, ast.Tuple) and all(isinstance(t, ast.Tuple) for t in node.targets):
            for target in node.targets:
                self._bind(target, Value(), node.value)
            return
        value = self.eval(node.value)
        for target in node.targets:
            self._bind(target, value, node.value)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self._bind(node.target, self.eval(node.value))

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        value = self.eval(node.value)
        if isinstance(node.target, ast.Name):
            old = self.env.get(node.target.id, Value())
            self.env[node.target.id] = (
                add(old, value) if isinstance(node.op, (ast.Add, ast.Sub)) else _joined(old, value, dict(old.axes))
            )

    def visit_For(self, node: ast.For) -> None:
        self.eval(node.iter)
        self._bind(node.target, Value())  # a loop counter is the same for every lane
        for statement in node.body + node.orelse:
            self.visit(statement)

    def visit_Expr(self, node: ast.Expr) -> None:
        self.eval(node.value)

    def visit_If(self, node: ast.If) -> None:
        self.eval(node.test)
        for statement in node.body + node.orelse:
            self.visit(statement)

    def visit_While(self, node: ast.While) -> None:
        self.eval(node.test)
        for statement in node.body + node.orelse:
            self.visit(statement)

    def visit_Return(self, node: ast.Return) -> None:
        if node.value is not None:
            self.eval(node.value)

    # expressions -----------------------------------------------------------------------------------------------
    def eval(self, node: ast.expr) -> Value:
        if isinstance(node, ast.Constant):
            return (
                Value(literal=float(node.value))
                if isinstance(node.value, (int, float)) and not isinstance(node.value, bool)
                else Value()
            )
        if isinstance(node, ast.Name):
            return self.env.get(node.id, Value())
        if isinstance(node, ast.UnaryOp):
            v = self.eval(node.operand)
            return replace(v, literal=-v.literal) if isinstance(node.op, ast.USub) and v.literal is not None else v
        if isinstance(node, ast.BinOp):
            return self._binop(node)
        if isinstance(node, ast.Subscript):
            return subscript(self.eval(node.value), node.slice)
        if isinstance(node, ast.Call):
            return self._call(node)
        if isinstance(node, (ast.Compare, ast.BoolOp)):
            parts = [self.eval(n) for n in ([node.left, *node.comparators] if isinstance(node, ast.Compare) else node.values)]
            out = parts[0]
            for p in parts[1:]:
                out = _joined(out, p, {**_aligned(out, max(out.ndim, p.ndim)), **_aligned(p, max(out.ndim, p.ndim))})
            return replace(out, pointers=frozenset(), literal=None)
        if isinstance(node, ast.IfExp):
            return self._union([self.eval(node.body), self.eval(node.orelse)])
        if isinstance(node, ast.Attribute):
            return replace(self.eval(node.value), literal=None)
        if isinstance(node, (ast.Tuple, ast.List)):
            for element in node.elts:
                self.eval(element)
        return Value(unknown=True)

    def _binop(self, node: ast.BinOp) -> Value:
        a, b = self.eval(node.left), self.eval(node.right)
        if isinstance(node.op, (ast.Add, ast.Sub)):
            out = add(a, b)
            if a.literal is not None and b.literal is not None:
                out = replace(out, literal=a.literal + b.literal if isinstance(node.op, ast.Add) else a.literal - b.literal)
            return out
        if isinstance(node.op, ast.Mult):
            return multiply(a, b)
        if isinstance(node.op, ast.FloorDiv):
            return divide(a, b)
        if isinstance(node.op, ast.Mod):
            return modulo(a, b)
        if isinstance(node.op, ast.LShift) and b.literal is not None:
            return multiply(a, Value(literal=2.0**b.literal))
        if isinstance(node.op, ast.Div) and a.literal is not None and b.literal:
            return Value(literal=a.literal / b.literal)
        ndim = max(a.ndim, b.ndim)
        return replace(_joined(a, b, {**_aligned(a, ndim), **_aligned(b, ndim)}), unknown=True)

    def _union(self, values: list[Value]) -> Value:
        out = values[0]
        for v in values[1:]:
            ndim = max(out.ndim, v.ndim)
            axes = {**_aligned(out, ndim), **_aligned(v, ndim)}
            out = replace(_joined(out, v, axes), unknown=out.unknown or v.unknown or _aligned(out, ndim) != _aligned(v, ndim))
        return out

    def _call(self, node: ast.Call) -> Value:
        name = tl_call(node)
        args = [self.eval(a) for a in node.args]
        keywords = {k.arg: self.eval(k.value) for k in node.keywords if k.arg}
        if isinstance(node.func, ast.Attribute) and name is None:  # a method: x.to(...), x.reshape(...)
            target = self.eval(node.func.value)
            return target if node.func.attr in PASS_THROUGH else replace(target, unknown=True, literal=None)
        if name == "arange":
            return Value(ndim=1, axes={0: 1.0})
        if name in ("program_id", "num_programs"):
            return Value()
        if name in ("cdiv", "minimum", "maximum") and args:
            return replace(self._union(args), literal=None)
        if name in ("zeros", "full"):
            return Value(ndim=_shape_ndim(node.args[0] if node.args else None), literal=0.0 if name == "zeros" else None)
        if name in ("zeros_like", "full_like"):
            return Value(ndim=args[0].ndim if args else 0, literal=0.0 if name == "zeros_like" else None)
        if name in LOADS + STORES + ATOMICS:
            return self._access(node, name, args, keywords)
        if name in PASS_THROUGH and args:
            return args[0]
        if name in REDUCTIONS and args:
            return Value(ndim=max(args[0].ndim - 1, 0), data=True)
        if name == "where" and len(args) == 3:
            return replace(self._union(args[1:]), data=args[0].data or args[1].data or args[2].data)
        if name in ("make_block_ptr", "advance"):
            pointers = frozenset().union(*(v.pointers for v in [*args, *keywords.values()]))
            return Value(pointers=pointers, unknown=True)
        everything = [*args, *keywords.values()]
        return Value(
            ndim=max((v.ndim for v in everything), default=0),
            axes={a: s for v in everything for a, s in _aligned(v, max((w.ndim for w in everything), default=0)).items()},
            pointers=frozenset().union(*(v.pointers for v in everything)) if name is None else frozenset(),
            data=any(v.data for v in everything) or name is not None,
            unknown=True,
        )

    def _access(self, node: ast.Call, op: str, args: list[Value], keywords: dict[str, Value]) -> Value:
        pointer = args[0] if args else keywords.get("pointer", Value(unknown=True))
        value = None if op in LOADS else (args[1] if len(args) > 1 else keywords.get("val", keywords.get("value")))
        self.accesses.append(Access(op, node.lineno, pointer, value, node))
        if op in STORES:
            return Value()
        return Value(ndim=pointer.ndim, axes=dict(pointer.axes), data=True)  # loaded data: never a pointer


def accesses(fn: ast.FunctionDef, tensors: Iterable[str], numbers: Mapping[str, float] | None = None) -> list[Access]:
    """The memory accesses of a kernel whose tensor arguments are ``tensors`` (``numbers``: the values a launch gave
    its number arguments), in the order they are written."""
    return Interpreter(fn, tensors, numbers).accesses
