"""A self-contained cell written from a recorded launch: the kernel's source, ``make_inputs()`` making its tensors
(shapes, dtypes, strides, views of one storage), ``run()`` launching the copy as the profiled run launched the
original (scalars, constexprs, launch options, grid), and ``reference()`` launching the original itself.

The judge's reference is :attr:`Lifted.reference`: the cell with ``run = reference``, so a version is compared
with the library's own kernel (or the file ``torch.compile`` wrote, with its decorator), not with the copy.
"""

from __future__ import annotations

import ast
import math
import re
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kernel_lab.errors import KernelLabError
from kernel_lab.lift import source as src
from kernel_lab.lift.sizes import Sizes
from kernel_lab.models import DTYPE_BYTES, LaunchRecord, TensorRecord

CPU_LARGEST = 40  # each size on the CPU at most this: Triton's interpreter runs one program at a time
REFERENCE_LINE = "\n\nrun = reference  # the judge's reference: the original kernel, launched as recorded\n"
INDUCTOR_GRIDS = {  # Inductor's grid kinds (torch._inductor.runtime.triton_heuristics): (numel, block) per axis
    "Grid1D": (("xnumel", "XBLOCK"),),
    "Grid2D": (("xnumel", "XBLOCK"), ("ynumel", "YBLOCK")),
    "Grid3D": (("xnumel", "XBLOCK"), ("ynumel", "YBLOCK"), ("znumel", "ZBLOCK")),
    "BatchMatmulGrid3D": (("znumel", "ZBLOCK"), ("ynumel", "YBLOCK"), ("xnumel", "XBLOCK")),
    "SplitScanGrid": (("r0_numel", "R0_BLOCK"), ("xnumel", None)),
}
BF16_LINE = 'BF16 = torch.bfloat16 if DEVICE == "cuda" else torch.float32  # the CPU interpreter computes bf16 wrongly'
EXTENT = '''
def _extent(*views):
    """Elements a storage needs for these (shape, strides, offset) views."""
    return max(offset + sum((n - 1) * s for n, s in zip(shape, strides)) + 1 for shape, strides, offset in views)
'''


class CannotLift(KernelLabError):
    """A launch that cannot be written as a cell; the message says what and why."""

    def __init__(self, message: str, fix: str = "Lift another kernel of the table, or write its cell by hand.") -> None:
        super().__init__(message, fix=fix)


@dataclass(frozen=True)
class Lifted:
    """A kernel lifted into a cell, and what it was lifted from."""

    kernel: str
    origin: str  # "library" (a @triton.jit launch) or "inductor" (a kernel torch.compile wrote)
    cell: str  # the cell's source
    launch: LaunchRecord  # the recorded launch it reproduces
    source: str  # where the kernel's text came from, in words
    module: str | None = None  # the library's module (put_back patches its kernel), when known
    vary: bool = True  # make_inputs takes the sizes (SHAPES): else the recorded sizes only
    notes: tuple[str, ...] = ()
    kernel_text: str = ""  # the kernel's def as the profiled run had it
    grid: tuple[int, ...] = ()  # the launch's grid at the recorded sizes (rebuilt for Inductor's launches)

    @property
    def reference(self) -> str:
        """The judge's reference cell: this cell, running the original kernel."""
        return self.cell + REFERENCE_LINE

    def save(self, path: str | Path) -> Path:
        """Write the cell to ``path`` (a folder: ``<kernel>.py`` in it); returns the file."""
        path = Path(path)
        if path.is_dir() or not path.suffix:
            path.mkdir(parents=True, exist_ok=True)
            path = path / f"{self.kernel}.py"
        path.write_text(self.cell)
        return path

    def __str__(self) -> str:
        return self.cell


@dataclass
class _Made:
    """One input of ``make_inputs``: a tensor as recorded, or a storage that ``run`` cuts views from."""

    name: str
    record: TensorRecord
    views: list[tuple[str, TensorRecord]] = field(default_factory=list)  # (variable, view) cut in run; [] if plain


@dataclass
class _Plan:
    inputs: list[_Made]
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


def _tuple(items: list[str]) -> str:
    return f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"


def _number(value: Any) -> str:
    if isinstance(value, float) and not math.isfinite(value):
        return f'float("{value}")'
    return repr(value)


def _dtype(name: str) -> str:
    return "BF16" if name == "bfloat16" else f"torch.{name}"


def _fill(dims: list[str], dtype: str) -> str:
    """A tensor of random values of ``dtype``: normal floats, 0 and 1 for integers, half true for bools."""
    shape = _tuple(dims) if dims else "()"
    if dtype == "bool":
        return f"torch.rand({shape}, device=DEVICE) < 0.5"
    if dtype.startswith(("int", "uint")):
        return f"torch.randint(0, 2, {shape}, dtype=torch.{dtype}, device=DEVICE)"
    if dtype.startswith("float8"):
        return f"torch.randn({shape}, device=DEVICE).to(torch.{dtype})"
    return f"torch.randn({shape}, dtype={_dtype(dtype)}, device=DEVICE)"


def _inputs(tensors: dict[str, TensorRecord]) -> tuple[list[_Made], dict[str, str]]:
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
            made.append(_Made(first_name, first))
            passed.update({n: first_name for n, _ in members})
            continue
        views = {t: f"{n}_view" if n == first_name else n for t, n in distinct.items()}
        made.append(_Made(f"{first_name}_storage", first, [(v, t) for t, v in views.items()]))
        passed.update({n: views[t] for n, t in members})
    return made, passed


def _derive(made: list[_Made], used: set[str], sizes: Sizes) -> list[str] | None:
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


def _plan(fn: ast.FunctionDef, launch: LaunchRecord, sizes: Sizes, grid: tuple[int, ...], counts: list[int]) -> _Plan | None:
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
    grid_text = _tuple([e or "" for e in entries])
    grid_text = f"lambda META: {grid_text}" if "META" in grid_text else grid_text
    lines = _making(made, sizes)
    if lines is None:
        return None
    make, cut = lines
    used = {n for n in sizes.symbols if n in _words(" ".join([*args.values(), grid_text, *cut]))}
    derive = _derive(made, used, sizes)
    if derive is None:
        return None
    return _Plan(made, args, grid_text, derive, cut, make, sizes, extent=bool(cut))


def _making(made: list[_Made], sizes: Sizes) -> tuple[list[str], list[str]] | None:
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
            spec = f"{_tuple(sizes.dims(view.shape))}, {_tuple([s or '' for s in strides])}, {offset}"
            specs.append(f"({spec})")
            cut.append(f"{variable} = torch.as_strided({m.name}, {spec})")
        make.append(f"{m.name} = {_fill(['_extent(' + ', '.join(specs) + ')'], m.record.dtype)}")
    return make, cut


def _itemsize(t: TensorRecord) -> int:
    return DTYPE_BYTES.get(t.dtype, 4)


def _words(text: str) -> set[str]:
    return set(re.findall(r"[A-Za-z_]\w*", text))


def inductor_grid(text: str, launch: LaunchRecord) -> tuple[int, ...]:
    """The grid Inductor's launcher computed for this launch, from its kernel's ``grid_type`` and the launch's
    numels and block sizes."""
    found = re.search(r"""['"]grid_type['"]\s*:\s*['"](\w+)['"]""", text)
    kind = found[1] if found else None
    if kind not in INDUCTOR_GRIDS:
        raise CannotLift(
            f"Inductor launched {launch.kernel} with a {kind or 'grid of a kind not written in its file'} grid, which "
            f"Kernel Lab does not rebuild (only {', '.join(INDUCTOR_GRIDS)})."
        )
    named = dict(launch.args)
    out = []
    for numel, block in INDUCTOR_GRIDS[kind]:
        n, b = named.get(numel), named.get(block) if block else None
        if not isinstance(n, int):
            raise CannotLift(f"The launch of {launch.kernel} records no {numel}, so its grid cannot be rebuilt.")
        out.append(-(-n // b) if isinstance(b, int) and b > 1 else n)
    return tuple(out)


def write(
    launch: LaunchRecord,
    found: src.KernelSource,
    *,
    report: str,
    reference: str,
    module: str | None = None,
    package: str | None = None,
    notes: tuple[str, ...] = (),
) -> Lifted:
    """The lifted cell of ``launch``, the kernel's text from ``found``; ``reference``: the code of the cell's
    ``_original()``, which returns the original kernel object (see :mod:`kernel_lab.lift.original`)."""
    tree = ast.parse(found.text)
    fn = src.kernel_def(tree, launch.kernel)
    if fn is None:
        raise CannotLift(f"{found.file} has no def {launch.kernel}.")
    inductor = launch.origin == "inductor"
    named = dict(launch.args)
    missing = [p for p in src.params(fn) if p not in named]
    if missing:
        raise CannotLift(f"The launch of {launch.kernel} records no {', '.join(missing)}: it cannot be replayed.")
    grid = launch.grid if launch.grid is not None else inductor_grid(found.text, launch) if inductor else None
    if grid is None:
        raise CannotLift(f"The launch of {launch.kernel} recorded no grid (it was a function the record could not call).")
    constexprs = set(src.constexprs(fn))
    scalars = {n: v for n, v in named.items() if n in src.params(fn) and n not in constexprs}
    scalars = {n: v for n, v in scalars.items() if not isinstance(v, TensorRecord)}
    counts = sorted((v for v in scalars.values() if isinstance(v, int) and not isinstance(v, bool)), reverse=True)
    sizes = Sizes.of(launch.tensors().values(), scalars, vary=not inductor and src.masked(fn))
    plan = _plan(fn, launch, sizes, grid, counts) if sizes.vary else None
    if plan is None:
        plan = _plan(fn, launch, sizes.fixed(), grid, counts)
    assert plan is not None  # at the recorded sizes everything is a literal
    drop = ("triton_helpers.set_driver_to_gpu()",)
    extracted = src.extract(found.text, launch.kernel, package, drop)
    written = [plan.args[p] for p in src.written(fn, [n for n in src.params(fn) if n in launch.tensors()])]
    why = _why_fixed(inductor, plan.sizes, fn)
    text = _compose(launch, found, extracted, plan, list(dict.fromkeys(written)), report, reference, why, notes)
    kernel_text = ast.get_source_segment(found.text, fn) or ""
    return Lifted(
        launch.kernel, "inductor" if inductor else "library", text, launch, found.describe(), module,
        plan.sizes.vary, (*notes, *([why] if why else [])), kernel_text, grid,
    )  # fmt: skip


def _why_fixed(inductor: bool, sizes: Sizes, fn: ast.FunctionDef) -> str:
    if sizes.vary or not sizes.symbols:
        return ""
    if inductor:
        return "Inductor wrote the sizes into the kernel: the cell runs at the recorded sizes only."
    if not src.masked(fn):
        return "The kernel masks no load or store: the cell runs at the recorded sizes only."
    return "Some of the launch's numbers are not written in its tensors' sizes: the cell runs at the recorded sizes only."


def _launch(kernel: str, fn: ast.FunctionDef, plan: _Plan, width: int = 100) -> str:
    """``kernel[grid](...)``: parameters positionally up to the first constexpr, then by name, then the options."""
    constexprs, params = set(src.constexprs(fn)), src.params(fn)
    parts, by_name = [], False
    for name in params:
        by_name = by_name or name in constexprs
        parts.append(f"{name}={plan.args[name]}" if by_name else plan.args[name])
    parts += [f"{n}={v}" for n, v in plan.args.items() if n not in params]
    one_line = f"    {kernel}[{plan.grid}]({', '.join(parts)})"
    if len(one_line) <= width:
        return one_line
    lines = [""]
    for part in parts:
        if lines[-1] and len(lines[-1]) + len(part) + 10 > width:
            lines.append("")
        lines[-1] += f"{part}, "
    return f"    {kernel}[{plan.grid}](\n" + "".join(f"        {line.rstrip()}\n" for line in lines) + "    )"


def _compose(
    launch: LaunchRecord,
    found: src.KernelSource,
    extracted: src.Extracted,
    plan: _Plan,
    written: list[str],
    report: str,
    reference: str,
    why_fixed: str,
    notes: tuple[str, ...],
) -> str:
    fn = src.kernel_def(ast.parse(extracted.kernel), launch.kernel)
    assert fn is not None
    names = [m.name for m in plan.inputs]
    symbols = dict(plan.sizes.symbols) if plan.sizes.vary else {}
    defaults = ", ".join(f"{n}={v}" for n, v in symbols.items())
    returns = ", ".join(written)
    body = "\n".join(f"    {line}" for line in [*plan.derive, *plan.cut])
    call = _launch(launch.kernel, fn, plan)
    original = call.replace(f"{launch.kernel}[", "_original()[", 1)
    make = plan.make
    bf16 = any(t.dtype == "bfloat16" for t in launch.tensors().values())
    where = "Inductor's generated file" if launch.origin == "inductor" else "its module"
    how = found.describe().split(" (")[1][:-1]
    header = [
        f"{launch.kernel}, lifted by Kernel Lab from the launch recorded with {report}.",
        "",
        f"Kernel: {found.file} line {launch.line}, {how}, with the module-level statements it uses.",
        f"Launch: grid {plan.grid.removeprefix('lambda META: ')}; shapes, dtypes, strides, scalars, constexprs and "
        "launch options as recorded.",
        f"run() launches this copy; reference() launches the original kernel ({where}) the same way. The judge "
        "compares versions with it: kernel_lab.lift(...).reference is this cell with run = reference.",
    ]
    dropped = [d.split("(")[0] for d in extracted.dropped if d.split("(")[0] not in ("triton.jit", "jit")]
    if dropped:
        header.append(f"Decorators replaced by @triton.jit (the launch holds what they chose): @{', @'.join(dropped)}.")
    header += [n for n in (why_fixed, *notes) if n]
    if extracted.unresolved:
        header.append(f"Not found in the kernel's file (define them before running): {', '.join(extracted.unresolved)}.")
    lines = [
        '"""' + "\n".join(_wrap(header)) + '\n"""',
        "",
        "import functools",
        "",
        "import torch",
        "import triton",
        "import triton.language as tl",
        "",
        'DEVICE = "cuda" if torch.cuda.is_available() else "cpu"',
        *([BF16_LINE] if bf16 else []),
    ]
    if symbols:
        cpu = plan.sizes.cpu(CPU_LARGEST)
        lines.append(
            f'SHAPES = [{_tuple([str(v) for v in symbols.values()])}] if DEVICE == "cuda" else '
            f"[{_tuple([str(v) for v in cpu.values()])}]  # ({', '.join(symbols)})"
        )
    lines += ["", "", f"# --- from {found.file} ---"]
    if extracted.helpers:
        lines += [extracted.helpers.rstrip(), "", ""]
    lines += [extracted.kernel.rstrip(), "", ""]
    lines += ["# --- the launch, as recorded ---"]
    if plan.extent:
        lines += [EXTENT.strip(), "", ""]
    lines += [f"def make_inputs({defaults}):", *(f"    {m}" for m in make), f"    return {_tuple(names)}", "", ""]
    lines += [f"def run({', '.join(names)}):", *([body] if body else []), call, f"    return {returns}", "", ""]
    lines += [
        f"def reference({', '.join(names)}):",
        f'    """The original {launch.kernel}, launched as run() launches the copy."""',
        *([body] if body else []),
        original,
        f"    return {returns}",
        "",
        "",
        reference.rstrip(),
        "",
    ]
    return "\n".join(lines)


def _wrap(lines: list[str], width: int = 116) -> list[str]:
    out: list[str] = []
    for line in lines:
        out += textwrap.wrap(line, width) or [""]
    return out
