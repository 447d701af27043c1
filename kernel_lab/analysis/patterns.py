"""Patterns in a Triton kernel's source that need a rewrite, each confirmed by the kernel's metrics.

* **A matrix product written as a broadcast multiply and a sum** (``tl.sum(a[:, :, None] * b[None, :, :], axis=1)``):
  ``tl.dot`` on the tiles in the dtype they were launched with (fp16/bf16: the half-precision tensor cores; fp32:
  TF32). Confirmed when the kernel does no work on that tensor path (a compiler may have made part of it a TF32
  product from the fp32 copies); the gain is the time its FLOPs would save at that tensor roof, as
  ``tensor_cores_unused`` counts it.
* **Per-element atomics onto one address** (``tl.atomic_add(ptr + offs * 0, x)``, ``ptr + tl.zeros_like(offs)``, a
  scalar pointer with a block of values): a block reduction, then one atomic per program. Confirmed when the kernel's
  atomics reach L2 (``lts__t_requests_srcunit_tex_op_*``); the gain is the time beyond streaming its DRAM bytes at
  the rate kernels reach (every update of one address waits for the one before).
* **Strided lanes that a 2-D tile would coalesce** (``tl.load(x_ptr + col * n + row)`` with ``col`` the lane index):
  an address whose every lane-varying axis puts neighbouring lanes a 32-byte sector or more apart (a row length, or a
  stride the launch passed: a stride argument of 1 is unit stride) and is not computed from loaded data. Confirmed by
  ``uncoalesced_global``, whose estimate it keeps, where the line holds a tenth of the kernel's excessive sectors or
  more: the pattern adds the line and the change (a score of 0 joins that finding and stands for nothing alone).

Each finding names the line and the change; the conductor merges it with the rule finding of its kind.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from kernel_lab import metrics as M
from kernel_lab.analysis import kernel_code, lanes
from kernel_lab.analysis.kernel_code import KernelCode
from kernel_lab.analysis.roofline import DRAM_REACHED, TENSOR_PATHS, roofline
from kernel_lab.models import DTYPE_BYTES, Bottleneck, Kernel, LaunchRecord, SourceLine

COMPILED = " (the compiler made tensor-core products of its copies)"
MAX_GAIN = 0.95  # no estimate claims a fix removes all of a kernel's time
MIN_GAIN = 0.05
SECTOR_BYTES = 32
MIN_LINE_SHARE = 0.10  # of the kernel's excessive sectors, for a strided line to speak for them
HALF = ("float16", "bfloat16")
#: atomic op -> the block reduction that leaves one update per program
REDUCE = {"atomic_add": "tl.sum", "atomic_max": "tl.max", "atomic_min": "tl.min"}
ATOMIC_REQUESTS = (
    "lts__t_requests_srcunit_tex_op_red.sum",
    "lts__t_requests_srcunit_tex_op_atom_dot_alu.sum",
    "lts__t_requests_srcunit_tex_op_atom_dot_cas.sum",
)


@dataclass(frozen=True)
class Match:
    """A place in a kernel's source that needs a rewrite: which, where, and what to write instead."""

    pattern: str  # "broadcast_sum_matmul", "one_address_atomics", "strided_lanes"
    kind: str  # the bottleneck kind it speaks for
    file: str
    line: int
    text: str
    change: str
    detail: str = ""  # for a matmul, the dtype its operands were launched with


def _line(code: KernelCode, node: ast.AST) -> tuple[int, str]:
    line = getattr(node, "lineno", code.fn.lineno)
    return line, code.text(line)


# --- the source patterns -------------------------------------------------------------------------------------------


def _itemsize(p: lanes.Value, launch: LaunchRecord | None) -> int:
    tensors = launch.tensors() if launch is not None else {}
    return next((DTYPE_BYTES.get(tensors[n].dtype, 4) for n in p.pointers if n in tensors), 4)


def _scattered(p: lanes.Value, itemsize: int) -> bool:
    """Whether every lane-varying axis of an address puts neighbouring lanes a sector or more apart."""
    strides = [s for s in p.axes.values() if s != lanes.SLOW]
    return bool(strides) and all(s == lanes.ROW or abs(float(s)) * itemsize >= SECTOR_BYTES for s in strides)


def strided(code: KernelCode, accesses: list[lanes.Access], launch: LaunchRecord | None) -> list[Match]:
    out = []
    for a in accesses:
        p = a.pointer
        if a.op in lanes.ATOMICS or p.unknown or p.data or not _scattered(p, _itemsize(p, launch)):
            continue
        line, text = _line(code, a.node)
        apart = [float(v) for v in p.axes.values() if v not in (lanes.SLOW, lanes.ROW)]
        by = f"{min(apart, key=abs):,.0f} elements" if apart else "a row length"
        change = (
            f"Neighbouring lanes step through memory {by} apart, each in a sector of its own. Load a 2-D tile whose last"
            " axis walks the contiguous dimension instead (ptr + rows[:, None] * row_length + cols[None, :]: consecutive"
            " lanes on consecutive addresses), then rearrange it in registers (tl.trans for a transpose, a reshape or"
            " split for an array of records), so that the loads and the stores are both coalesced."
        )
        out.append(Match("strided_lanes", "uncoalesced_global", code.file, line, text, change))
    return out


def one_address(code: KernelCode, accesses: list[lanes.Access]) -> list[Match]:
    out = []
    for a in accesses:
        p, v = a.pointer, a.value
        if a.op not in REDUCE or p.unknown or p.data or p.varies or not p.pointers:
            continue
        if max(p.ndim, v.ndim if v is not None else 0) < 1:  # one scalar update per program: already reduced
            continue
        line, text = _line(code, a.node)
        change = (
            f"Every lane of the block updates the same address, one after another. Reduce the block first and update once"
            f" per program: tl.{a.op}(ptr, {REDUCE[a.op]}(values, axis=0)), a BLOCK-th of the atomics (or write one"
            " partial result per program and combine them in a second, small kernel)."
        )
        out.append(Match("one_address_atomics", "atomic_contention", code.file, line, text, change))
    return out


def _none_position(node: ast.expr) -> int | None:
    """For ``x[:, :, None]``, the position of its one None among three (else None)."""
    if not isinstance(node, ast.Subscript) or not isinstance(node.slice, ast.Tuple) or len(node.slice.elts) != 3:
        return None
    nones = [i for i, e in enumerate(node.slice.elts) if isinstance(e, ast.Constant) and e.value is None]
    return nones[0] if len(nones) == 1 else None


def _axis(call: ast.Call) -> int | None:
    given = call.args[1] if len(call.args) > 1 else next((k.value for k in call.keywords if k.arg == "axis"), None)
    return given.value if isinstance(given, ast.Constant) and isinstance(given.value, int) else None


def _assigned(fn: ast.FunctionDef) -> dict[str, ast.expr]:
    """Name -> the expression last assigned to it (a name assigned more than once keeps its last)."""
    out = {}
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            out[node.targets[0].id] = node.value
    return out


def _unwrapped(node: ast.expr, assigned: dict[str, ast.expr]) -> ast.expr:
    """The expression a name stands for, and under casts (``(a * b).to(tl.float32)``)."""
    for _ in range(4):
        if isinstance(node, ast.Name) and node.id in assigned:
            node = assigned[node.id]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in lanes.PASS_THROUGH:
            node = node.args[0] if lanes.tl_call(node) and node.args else node.func.value
        else:
            break
    return node


def _launched_dtype(expr: ast.expr | None, launch: LaunchRecord | None) -> str | None:
    """The dtype of the tensor an operand was loaded from (``a = tl.load(a_ptr + ...).to(...)``), from the launch."""
    if expr is None or launch is None:
        return None
    tensors = launch.tensors()
    for node in ast.walk(expr):
        if isinstance(node, ast.Name) and node.id in tensors:
            return tensors[node.id].dtype
    return None


def broadcast_sum(code: KernelCode, launch: LaunchRecord | None) -> list[Match]:
    assigned = _assigned(code.fn)
    out = []
    for node in ast.walk(code.fn):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "sum" and node.args):
            continue
        product = _unwrapped(node.args[0], assigned)
        if not (isinstance(product, ast.BinOp) and isinstance(product.op, ast.Mult)):
            continue
        pa, pb, axis = _none_position(product.left), _none_position(product.right), _axis(node)
        if pa is None or pb is None or pa == pb or axis is None or axis in (pa, pb):
            continue
        sides = [(product.left, pa), (product.right, pb)]
        if _free(pa, axis) > _free(pb, axis):  # tl.dot's first operand holds the result's first axis
            sides.reverse()
        (first, p1), (second, p2) = sides
        a, b = ast.unparse(first.value), ast.unparse(second.value)  # type: ignore[attr-defined]
        dot = f"tl.dot({_maybe_trans(a, _transposed(p1, axis))}, {_maybe_trans(b, _transposed(p2, axis, second=True))})"
        operand = first.value  # type: ignore[attr-defined]
        dtype = _launched_dtype(assigned.get(operand.id) if isinstance(operand, ast.Name) else None, launch)
        line, text = _line(code, node)
        change = _dot_change(dot, dtype)
        out.append(Match("broadcast_sum_matmul", "tensor_cores_unused", code.file, line, text, change, dtype or ""))
    return out


def _free(none_at: int, axis: int) -> int:
    """The axis of an operand of the broadcast product that is neither broadcast nor summed."""
    return next(i for i in range(3) if i not in (none_at, axis))


def _maybe_trans(operand: str, transposed: bool) -> str:
    return f"tl.trans({operand})" if transposed else operand


def _transposed(none_at: int, axis: int, second: bool = False) -> bool:
    """Whether an operand of the broadcast product must be transposed to be tl.dot's (M, K) (or, ``second``, (K, N))."""
    kept = [i for i in range(3) if i != none_at]  # its two axes, in order
    k_first = kept.index(axis) == 0
    return k_first != second


def _dot_change(dot: str, dtype: str | None) -> str:
    if dtype in HALF:
        return (
            f"This is a matrix product: write it as {dot} on the {dtype} tiles as they are loaded (no .to(tl.float32)),"
            f" accumulating in fp32 (acc += {dot}): the {dtype} tensor cores do it, and the conversions go. tl.dot needs"
            " tiles of at least 16 in each dimension."
        )
    return (
        f"This is a matrix product: write it as {dot}, accumulating in fp32: in fp32 it runs on the TF32 tensor cores"
        " (input_precision='ieee' keeps fp32 exactness at FP32 speed); bf16 tiles, where accuracy allows, run twice as"
        " fast. tl.dot needs tiles of at least 16 in each dimension."
    )


def find(code: KernelCode, launch: LaunchRecord | None = None) -> list[Match]:
    """Every pattern in a kernel's source (``launch``: what it was launched with, for its tensors and their dtypes)."""
    tensors = launch.tensors() if launch is not None else code.params
    found = lanes.accesses(code.fn, tensors, kernel_code.numbers(launch))
    return [*broadcast_sum(code, launch), *one_address(code, found), *strided(code, found, launch)]


# --- confirmed by the metrics ---------------------------------------------------------------------------------------


def _source(m: Match) -> tuple[SourceLine, ...]:
    return (SourceLine(m.file, m.line, 1.0, m.text),)


def _matmul(m: Match, k: Kernel) -> Bottleneck | None:
    roof_name = "Tensor BF16/FP16" if m.detail in HALF else "Tensor TF32"
    r = roofline(k)
    paths = TENSOR_PATHS[roof_name][0]
    if any(k.get(f"sm__ops_path_tensor_op_{p}.sum") for p in paths) or not r.precision or not k.has(M.DURATION):
        return None  # already on that path, or no work counted
    roof = r.compute.get(roof_name)
    seconds = k.value(M.DURATION) * 1e-9
    flops = r.flop_rate * seconds
    if roof is None or not seconds:
        return None
    gain = 1 - flops / roof.value / seconds
    if gain < MIN_GAIN:
        return None
    summary = f"Matrix product as a broadcast multiply and a sum (line {m.line}): tl.dot would reach the {roof_name} roof"
    hint = (
        f"Line {m.line} multiplies two broadcast tiles and sums them: {m.text}. The kernel does {flops / 1e9:,.1f} GFLOP"
        f" at {r.flop_rate / 1e12:,.1f} TFLOP/s as {r.precision} work{COMPILED if r.precision.startswith('Tensor') else ''},"
        f" {r.flop_rate / roof.value:.0%} of the {roof_name} roof ({roof.value / 1e12:,.0f} TFLOP/s). {m.change}"
    )
    evidence: dict[str, float | str] = {"pattern": m.pattern, "line": m.line, "flops": flops, "flop_rate": r.flop_rate, "precision": r.precision,
                "time_at_tensor_roof_us": round(flops / roof.value * 1e6, 2)}  # fmt: skip
    return Bottleneck("tensor_cores_unused", min(gain, MAX_GAIN), summary, hint, evidence, _source(m))


def _atomics(m: Match, k: Kernel) -> Bottleneck | None:
    requests = sum(k.get(name) or 0.0 for name in ATOMIC_REQUESTS)
    dram = roofline(k).memory.get("DRAM")
    if not requests or dram is None or not k.has(M.DURATION, M.DRAM_READ, M.DRAM_WRITE):
        return None
    moved = k.value(M.DRAM_READ) + k.value(M.DRAM_WRITE)
    stream_ns = moved / (dram.value * DRAM_REACHED) * 1e9
    gain = 1 - stream_ns / k.value(M.DURATION)
    if gain < MIN_GAIN:
        return None
    summary = f"Per-element atomics onto one address (line {m.line}): reduce the block first"
    hint = (
        f"Line {m.line} applies an atomic for every element onto one address: {m.text}. The kernel sent"
        f" {requests:,.0f} atomic requests to L2 and runs {k.value(M.DURATION) / 1000:,.1f} µs, where streaming its"
        f" {moved / 1e6:,.1f} MB from DRAM takes about {stream_ns / 1000:,.1f} µs. {m.change}"
    )
    evidence: dict[str, float | str] = {
        "pattern": m.pattern,
        "line": m.line,
        "atomic_requests": requests,
        "stream_us": round(stream_ns / 1000, 2),
    }
    for name in (M.ATOMIC_UNIT_MAX, M.ATOMIC_UNIT_AVG):
        if k.has(name):
            evidence[name] = k.value(name)
    return Bottleneck("atomic_contention", min(gain, MAX_GAIN), summary, hint, evidence, _source(m))


def _strided(m: Match, k: Kernel) -> Bottleneck | None:
    wasted = k.line_counters.get("excessive_sectors", {})
    total = sum(wasted.values())
    share = wasted.get((m.file, m.line), 0.0) / total if total else 0.0
    if total and share < MIN_LINE_SHARE:
        return None  # the sectors are wasted elsewhere
    summary = f"Strided lanes (line {m.line}): a 2-D tile would coalesce them"
    hint = f"Line {m.line}: {m.text}. {m.change}"
    evidence: dict[str, float | str] = {"pattern": m.pattern, "line": m.line, "share_of_excessive_sectors": round(share, 3)}
    return Bottleneck("uncoalesced_global", 0.0, summary, hint, evidence, (SourceLine(m.file, m.line, share or 1.0, m.text),))


CONFIRM = {"broadcast_sum_matmul": _matmul, "one_address_atomics": _atomics, "strided_lanes": _strided}


def findings(kernel: Kernel, launch: LaunchRecord | None) -> tuple[Bottleneck, ...]:
    """The source patterns of a kernel its metrics confirm, as findings of their kinds (see the module docstring)."""
    code = kernel_code.find(kernel, launch)
    if code is None:
        return ()
    confirmed = (CONFIRM[m.pattern](m, kernel) for m in find(code, launch))
    return tuple(b for b in confirmed if b is not None)
