"""A self-contained cell written from a recorded launch: the kernel's source, ``make_inputs()`` making its tensors
(shapes, dtypes, strides, views of one storage), ``run()`` launching the copy as the profiled run launched the
original (scalars, constexprs, launch options, grid), and ``reference()`` launching the original itself.

The judge's reference is :attr:`Lifted.reference`: the cell with ``run = reference``, so a version is compared
with the library's own kernel (or the file ``torch.compile`` wrote, with its decorator), not with the copy.
"""

from __future__ import annotations

import ast
import re
import textwrap
from dataclasses import dataclass
from pathlib import Path

from kernel_lab.cells import parse
from kernel_lab.errors import KernelLabError
from kernel_lab.lifting import source as src
from kernel_lab.lifting.plan import Plan, plan_of, tuple_of
from kernel_lab.lifting.sizes import Sizes
from kernel_lab.models import LaunchRecord, TensorRecord

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
    ``_original()``, which returns the original kernel object (see :mod:`kernel_lab.lifting.original`)."""
    tree = parse(found.text)
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
    plan = plan_of(fn, launch, sizes, grid, counts) if sizes.vary else None
    if plan is None:
        plan = plan_of(fn, launch, sizes.fixed(), grid, counts)
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


def _launch(kernel: str, fn: ast.FunctionDef, plan: Plan, width: int = 100) -> str:
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
    plan: Plan,
    written: list[str],
    report: str,
    reference: str,
    why_fixed: str,
    notes: tuple[str, ...],
) -> str:
    """The cell: its docstring, its head, the kernel with what it uses, make_inputs, run, reference, _original."""
    lines = [_docstring(launch, found, extracted, plan, report, (why_fixed, *notes)), *_head(launch, plan)]
    lines += ["", "", f"# --- from {found.file} ---"]
    if extracted.helpers:
        lines += [extracted.helpers.rstrip(), "", ""]
    lines += [extracted.kernel.rstrip(), "", "", "# --- the launch, as recorded ---"]
    if plan.extent:
        lines += [EXTENT.strip(), "", ""]
    fn = src.kernel_def(parse(extracted.kernel), launch.kernel)
    assert fn is not None
    lines += _functions(launch.kernel, fn, plan, written)
    return "\n".join([*lines, "", "", reference.rstrip(), ""])


def _docstring(
    launch: LaunchRecord, found: src.KernelSource, extracted: src.Extracted, plan: Plan, report: str, notes: tuple[str, ...]
) -> str:
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
    header += [n for n in notes if n]
    if extracted.unresolved:
        header.append(f"Not found in the kernel's file (define them before running): {', '.join(extracted.unresolved)}.")
    return '"""' + "\n".join(_wrap(header)) + '\n"""'


def _head(launch: LaunchRecord, plan: Plan) -> list[str]:
    """The imports, the device, bfloat16's stand-in on the CPU, and the declared shapes when sizes vary."""
    lines = ["", "import functools", "", "import torch", "import triton", "import triton.language as tl", ""]
    lines.append('DEVICE = "cuda" if torch.cuda.is_available() else "cpu"')
    if any(t.dtype == "bfloat16" for t in launch.tensors().values()):
        lines.append(BF16_LINE)
    if plan.sizes.vary and plan.sizes.symbols:
        symbols, cpu = plan.sizes.symbols, plan.sizes.cpu(CPU_LARGEST)
        lines.append(
            f'SHAPES = [{tuple_of([str(v) for v in symbols.values()])}] if DEVICE == "cuda" else '
            f"[{tuple_of([str(v) for v in cpu.values()])}]  # ({', '.join(symbols)})"
        )
    return lines


def _functions(kernel: str, fn: ast.FunctionDef, plan: Plan, written: list[str]) -> list[str]:
    """make_inputs, run (the copy) and reference (the original, launched the same way)."""
    names = [m.name for m in plan.inputs]
    symbols = plan.sizes.symbols if plan.sizes.vary else {}
    defaults = ", ".join(f"{n}={v}" for n, v in symbols.items())
    body = [f"    {line}" for line in [*plan.derive, *plan.cut]]
    call = _launch(kernel, fn, plan)
    returns = f"    return {', '.join(written)}"
    return [
        f"def make_inputs({defaults}):", *(f"    {m}" for m in plan.make), f"    return {tuple_of(names)}", "", "",
        f"def run({', '.join(names)}):", *body, call, returns, "", "",
        f"def reference({', '.join(names)}):",
        f'    """The original {kernel}, launched as run() launches the copy."""',
        *body, call.replace(f"{kernel}[", "_original()[", 1), returns,
    ]  # fmt: skip


def _wrap(lines: list[str], width: int = 116) -> list[str]:
    out: list[str] = []
    for line in lines:
        out += textwrap.wrap(line, width) or [""]
    return out
