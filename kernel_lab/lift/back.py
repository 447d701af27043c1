"""Put an optimized kernel back where the model launches it, for this process: reversible and logged.

:func:`put_back` runs the lifted cell and the optimized version once each (at the cell's first declared shape),
recording their launches, and keeps what the optimized version changed: the kernel's code and the values of its
constexprs and launch options (``BLOCK_SIZE``, ``num_warps``...). It refuses a version that launches another
kernel signature, several kernels, or other tensors or scalars: those change what is computed, not how.

* A library's kernel: every reference to the library's kernel object in this process's modules is replaced by a
  :class:`Replacement`, which takes the library's launch (``kernel[grid](...)``) and launches the new kernel with
  the new values where the library launches with the configuration that was profiled and verified (the same
  constexprs and options, the same dtypes; the same sizes too when the cell's sizes could not vary); any other
  launch, and one whose fixed grid the new block sizes do not fit, runs the library's own kernel. A grid given
  as a function of the launch's meta-parameters (Triton's convention) is evaluated with the new values.
* A kernel ``torch.compile`` wrote: the new kernel is registered as a ``torch.library.triton_op``
  (``torch.ops.kernel_lab.<kernel>``, its launch inside ``wrap_triton`` so that ``torch.compile`` sees it), and the
  compiled graph's launcher of the old kernel is replaced by a :class:`CompiledReplacement` that calls the op where
  Inductor launches the recorded tensors (Inductor wrote the sizes into the kernel).

:meth:`Patch.undo` (or leaving ``with put_back(...):``) puts the originals back. Every step is logged on the
``kernel_lab.lift`` logger and kept in :attr:`Patch.log`. An op once registered stays registered (torch.library has
no public way to remove one); undo routes the model away from it.
"""

from __future__ import annotations

import ast
import hashlib
import importlib
import importlib.util
import inspect
import logging
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from kernel_lab.errors import KernelLabError
from kernel_lab.lift import library
from kernel_lab.lift import source as src
from kernel_lab.lift.cell import Lifted
from kernel_lab.models import LaunchRecord, TensorRecord
from kernel_lab.profiling import launches

logger = logging.getLogger("kernel_lab.lift")
OPTIONS = ("num_warps", "num_stages", "num_ctas", "maxnreg", "enable_fp_fusion", "launch_pdl")
NAMESPACE = "kernel_lab"
#: the patches in force in this process, oldest first
ACTIVE: list[Patch] = []


class CannotPutBack(KernelLabError):
    """A version that cannot stand in the library's launch; the message says why."""

    def __init__(
        self, message: str, fix: str = "Put back a version that changes only the kernel or its launch parameters."
    ) -> None:
        super().__init__(message, fix=fix)


def load(text: str, stem: str) -> ModuleType:
    """A cell's text loaded as a module from a file of its own (Triton reads a kernel's source from its file)."""
    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    path = Path(tempfile.gettempdir()) / "kernel_lab_put_back" / f"{stem}_{digest}.py"
    path.parent.mkdir(exist_ok=True)
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def recorded(module: ModuleType) -> list[LaunchRecord]:
    """The Triton launches of one ``run(*make_inputs(...))`` of a cell's module, at its first declared shape."""
    import torch

    shapes = getattr(module, "SHAPES", None)
    torch.manual_seed(0)
    made = module.make_inputs(*shapes[0]) if shapes else module.make_inputs()
    inputs = tuple(made) if isinstance(made, (tuple, list)) else (made,)
    recorder = launches.Recorder()
    with recorder.recording():
        module.run(*inputs)
    return recorder.launches


def _value_changes(before: LaunchRecord, after: LaunchRecord, params: list[str], constexprs: set[str]) -> dict[str, Any]:
    """What the optimized launch sets otherwise: constexprs and launch options (a refusal for anything else)."""
    old, new = dict(before.args), dict(after.args)
    changes = {}
    for name in dict.fromkeys([*old, *new]):
        a, b = old.get(name), new.get(name)
        tensors = isinstance(a, TensorRecord), isinstance(b, TensorRecord)
        if any(tensors):
            if not all(tensors) or (a.shape, a.dtype, a.strides) != (b.shape, b.dtype, b.strides):  # type: ignore[union-attr]
                raise CannotPutBack(f"The optimized version launches {before.kernel} with another tensor {name}.")
        elif a != b:
            if name in params and name not in constexprs:
                raise CannotPutBack(
                    f"The optimized version passes {name}={b!r} where the library passes {a!r}: that changes what the"
                    " kernel computes from, which the library's launch cannot follow."
                )
            changes[name] = b
    return changes


@dataclass
class Change:
    """What putting back changes: the new kernel, its launch's new values, and the launches compared."""

    kernel: Any  # the optimized version's @triton.jit function
    values: dict[str, Any]
    before: LaunchRecord
    after: LaunchRecord
    text: str  # the optimized version's source

    @property
    def grid_changes(self) -> bool:
        return self.before.grid != self.after.grid


def change(lifted: Lifted, optimized: str) -> Change:
    """Run the lifted cell and the optimized version once each and compare their launches (module docstring)."""
    cell = load(lifted.cell, f"lifted_{lifted.kernel}")
    before = [x for x in recorded(cell) if x.kernel == lifted.kernel]
    module = load(optimized, f"optimized_{lifted.kernel}")
    after = recorded(module)
    if len(before) != 1:
        raise CannotPutBack(f"The lifted cell launched {lifted.kernel} {len(before)} times, not once.", fix="Lift it again.")
    if len(after) != 1:
        raise CannotPutBack(
            f"The optimized version launches {len(after)} kernels where the library launched one: a patch of the"
            " library's kernel object cannot stand for that.",
            fix="Put back a version with one kernel, or change the library's call yourself.",
        )
    kernel = library.jit_function(getattr(module, after[0].kernel, None))
    if kernel is None:
        raise CannotPutBack(f"The optimized version launches {after[0].kernel}, which it does not define at module level.")
    old = list(library.jit_function(getattr(cell, lifted.kernel)).arg_names)
    if list(kernel.arg_names) != old:
        raise CannotPutBack(
            f"The optimized {after[0].kernel} takes ({', '.join(kernel.arg_names)}) where the library's takes"
            f" ({', '.join(old)}): the library's launch cannot call it.",
        )
    values = _value_changes(before[0], after[0], old, library.constexprs(kernel))
    if not values and library.same_kernel(kernel, lifted.kernel_text):
        raise CannotPutBack(
            f"This version launches {lifted.kernel} as the library does: there is nothing to put back.",
            fix="Put back a faster version (optimize's best, when it found one).",
        )
    return Change(kernel, values, before[0], after[0], optimized)


@dataclass
class Patch:
    """A kernel replaced in this process; :meth:`undo` (or the end of a ``with`` block) puts the original back."""

    kernel: str
    sites: list[tuple[Any, str, Any, Any]] = field(default_factory=list)  # (module, attribute, original, replacement)
    op: Any = None  # the torch.library.triton_op (a kernel torch.compile wrote)
    op_name: str | None = None  # its name, "kernel_lab::<kernel>": torch.ops.kernel_lab.<kernel> calls it
    log: list[str] = field(default_factory=list)
    replacements: list[Any] = field(default_factory=list)  # what stands for the original (they count launches)

    def replace(self, module: Any, name: str, replacement: Any) -> None:
        """Put ``replacement`` where ``module.name`` is, keeping the original for :meth:`undo`."""
        self.sites.append((module, name, module.__dict__[name], replacement))
        setattr(module, name, replacement)
        if all(r is not replacement for r in self.replacements):
            self.replacements.append(replacement)

    def say(self, message: str) -> None:
        self.log.append(message)
        logger.info(message)

    @property
    def routed(self) -> int:
        """Launches that ran the new kernel so far."""
        return sum(r.routed for r in self.replacements)

    @property
    def passed(self) -> int:
        """Launches left to the original (another configuration than the one profiled)."""
        return sum(r.passed for r in self.replacements)

    def undo(self) -> None:
        """Put the original kernel objects back wherever a replacement stands (again: nothing more to do)."""
        for module, name, original, replacement in self.sites:
            where = f"{getattr(module, '__name__', module)}.{name}"
            if module.__dict__.get(name) is replacement:
                setattr(module, name, original)
                self.say(f"restored {where}")
            else:
                self.say(f"left {where} as it is: something else replaced it since")
        self.sites = []
        if self in ACTIVE:
            ACTIVE.remove(self)

    def __enter__(self) -> Patch:
        return self

    def __exit__(self, *exc: object) -> None:
        self.undo()

    def __str__(self) -> str:
        state = "in force" if self.sites else "undone"
        return f"{self.kernel}: patch {state}; {self.routed} launch(es) ran the new kernel, {self.passed} the original"


class Replacement:
    """Stands for a library's kernel object: ``replacement[grid](...)`` launches the new kernel where the library
    launches with the profiled configuration, else the original (see the module docstring)."""

    def __init__(self, original: Any, found: Change, lifted: Lifted) -> None:
        jit = library.jit_function(original)
        self.original, self.new, self.values = original, found.kernel, found.values
        self.params = list(jit.arg_names)
        self.constexprs = library.constexprs(jit)
        scalars = {n: v for n, v in found.before.args if not isinstance(v, TensorRecord)}
        #: the profiled constexprs and options (an autotuner's or heuristics' choice among them, where it chose)
        self.tuned = {n: v for n, v in scalars.items() if n in self.constexprs or n not in self.params}
        # a wrapped kernel (autotune, heuristics) chooses its values by the sizes: only the profiled sizes are known
        same_sizes = not lifted.vary or jit is not original
        self.sizes = {n: v for n, v in scalars.items() if n not in self.tuned} if same_sizes else {}
        self.tensors = {n: (t.dtype, t.shape) for n, t in found.before.tensors().items()}
        self.same_sizes = same_sizes
        self.grid_changes = found.grid_changes
        self.routed = self.passed = 0

    def _profiled(self, named: dict[str, Any]) -> bool:
        """Whether a launch has the configuration that was profiled and verified."""
        if any(n in named and named[n] != v for n, v in self.tuned.items()):
            return False
        if any(named.get(n) != v for n, v in self.sizes.items()):
            return False
        for name, (dtype, shape) in self.tensors.items():
            tensor = named.get(name)
            if str(getattr(tensor, "dtype", "")).removeprefix("torch.") != dtype:
                return False
            if self.same_sizes and tuple(getattr(tensor, "shape", ())) != shape:
                return False
        return True

    def __getitem__(self, grid: Any) -> Callable[..., Any]:
        def launch(*args: Any, **kwargs: Any) -> Any:
            named = {**dict(zip(self.params, args)), **kwargs}
            if not self._profiled(named) or (self.grid_changes and not callable(grid)):
                self.passed += 1
                return self.original[grid](*args, **kwargs)
            self.routed += 1
            return self.new[grid](**{**self.tuned, **named, **self.values})

        return launch

    def run(self, *args: Any, grid: Any, warmup: bool = False, **kwargs: Any) -> Any:
        if warmup:
            return self.original.run(*args, grid=grid, warmup=True, **kwargs)
        return self[grid](*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.original, name)


def _references(obj: Any) -> Iterator[tuple[ModuleType, str]]:
    """Every module attribute of this process that is ``obj``."""
    for module in list(sys.modules.values()):
        for name, value in list(getattr(module, "__dict__", {}).items()):
            if value is obj:
                yield module, name


def put_back_library(lifted: Lifted, found: Change) -> Patch:
    if lifted.module is None:
        raise CannotPutBack(
            f"The module that defines {lifted.kernel} is not known here (the report came from elsewhere).",
            fix="Import the library, lift the kernel again in this process, then put it back.",
        )
    try:
        module = importlib.import_module(lifted.module)
    except ImportError as err:
        raise CannotPutBack(f"{lifted.module} cannot be imported here ({err}).", fix="Install or import the library.") from None
    original = getattr(module, lifted.kernel)
    replacement = Replacement(original, found, lifted)
    patch = Patch(lifted.kernel)
    for where, name in _references(original):
        patch.replace(where, name, replacement)
        patch.say(f"replaced {where.__name__}.{name} with the optimized {lifted.kernel} ({_values(found.values)})")
    return patch


def _values(values: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in values.items()) or "the same launch parameters"


def _is_launcher(obj: Any) -> bool:
    return hasattr(obj, "triton_meta") and hasattr(obj, "fn") and callable(getattr(obj, "run", None))


def compiled_launchers(lifted: Lifted) -> list[tuple[ModuleType, str, Any]]:
    """Inductor's launchers of the lifted kernel in this process's modules (the compiled graphs' and the kernels'
    own files): by name, and by source where the launcher's file can be read."""
    modules: list[Any] = list(sys.modules.values())
    codecache = sys.modules.get("torch._inductor.codecache")
    if codecache is not None:  # the compiled graphs' modules, and the kernels' (loaded without attributes)
        modules += list(getattr(codecache.PyCodeCache, "modules", []))
        modules += list(getattr(codecache.PyCodeCache, "modules_no_attr", {}).values())
    out, seen = [], set()
    for module in modules:
        obj = getattr(module, "__dict__", {}).get(lifted.kernel)
        if id(module) in seen or not _is_launcher(obj):
            continue
        seen.add(id(module))
        try:
            inspect.getsource(library.jit_function(obj).fn)
        except (OSError, TypeError, AttributeError):
            same = True  # no source to compare: the name decides
        else:
            same = library.same_kernel(obj, lifted.kernel_text)
        if same:
            out.append((module, lifted.kernel, obj))
    return out


def triton_op(name: str, found: Change) -> Any:
    """The optimized kernel as ``torch.ops.kernel_lab.<name>``: its tensors in, nothing out (it writes its outputs
    in place, as Inductor's kernels do), launched as the optimized version launched it."""
    import torch
    from torch.library import triton_op as make_op
    from torch.library import wrap_triton

    params = list(found.kernel.arg_names)
    named = dict(found.after.args)
    tensors = [p for p in params if isinstance(named.get(p), TensorRecord)]
    fn = src.kernel_def(ast.parse(found.text), found.after.kernel)
    written = src.written(fn, tensors) if fn is not None else tensors
    options = {k: v for k, v in named.items() if k not in params}
    grid = found.after.grid

    def launch(*given: Any) -> None:
        values = dict(zip(tensors, given))
        wrap_triton(found.kernel)[grid](*(values.get(p, named.get(p)) for p in params), **options)

    kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
    launch.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter(t, kind, annotation=torch.Tensor) for t in tensors], return_annotation=None
    )
    launch.__name__ = name
    return make_op(f"{NAMESPACE}::{name}", launch, mutates_args=set(written))


def op_name(kernel: str) -> str:
    """``kernel``, or ``kernel_2``... when an op of that name was registered in this process already."""
    import torch

    name, n = kernel, 1
    while hasattr(getattr(torch.ops, NAMESPACE), name):
        n += 1
        name = f"{kernel}_{n}"
    return name


class CompiledReplacement:
    """Stands for Inductor's launcher of a kernel: ``.run(*args, stream=...)`` calls the op where Inductor launches
    the recorded tensors, else the original launcher."""

    def __init__(self, original: Any, op: Any, before: LaunchRecord) -> None:
        self.original, self.op = original, op
        self.signature = list(original.triton_meta.get("signature", {}))
        self.expected = dict(before.args)
        self.routed = self.passed = 0

    def _profiled(self, named: dict[str, Any]) -> bool:
        for name, value in named.items():
            want = self.expected.get(name)
            if isinstance(want, TensorRecord):
                if tuple(value.shape) != want.shape or str(value.dtype).removeprefix("torch.") != want.dtype:
                    return False
            elif want is not None and value != want:
                return False
        return True

    def run(self, *args: Any, stream: Any = None, **kwargs: Any) -> Any:
        named = dict(zip(self.signature, args))
        if kwargs.get("benchmark_run") or not self._profiled(named):
            self.passed += 1
            return self.original.run(*args, stream=stream, **kwargs)
        self.routed += 1
        return self.op(*(v for v in named.values() if hasattr(v, "untyped_storage")))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.original, name)


def put_back_compiled(lifted: Lifted, found: Change) -> Patch:
    name = op_name(lifted.kernel)
    op = triton_op(name, found)
    patch = Patch(lifted.kernel, op=op, op_name=f"{NAMESPACE}::{name}")
    patch.say(f"registered torch.ops.{NAMESPACE}.{name}: the optimized {lifted.kernel} ({_values(found.values)})")
    replacements: dict[int, CompiledReplacement] = {}
    for module, attribute, original in compiled_launchers(lifted):
        replacement = replacements.setdefault(id(original), CompiledReplacement(original, op, found.before))
        patch.replace(module, attribute, replacement)
        patch.say(f"routed {getattr(module, '__name__', module)}.{attribute} to torch.ops.{NAMESPACE}.{name}")
    if not patch.sites:
        patch.say(
            f"no compiled graph of this process launches {lifted.kernel}: run the compiled model once, then put it back"
            f" again (or call torch.ops.{NAMESPACE}.{name} yourself)"
        )
    return patch


def put_back(lifted: Lifted, optimized: Any) -> Patch:
    """Put the optimized version of a lifted kernel back where the model launches it (see the module docstring).
    ``optimized``: its source, a ``.py`` path, an optimize result (its best version) or a session version."""
    text = _source(optimized)
    found = change(lifted, text)
    patch = put_back_compiled(lifted, found) if lifted.origin == "inductor" else put_back_library(lifted, found)
    ACTIVE.append(patch)
    return patch


def _source(optimized: Any) -> str:
    best = getattr(optimized, "best", None)
    if best is not None and hasattr(best, "source"):
        return best.source
    if hasattr(optimized, "source"):
        return optimized.source
    if isinstance(optimized, Path) or (isinstance(optimized, str) and optimized.endswith(".py") and "\n" not in optimized):
        return Path(optimized).read_text()
    if isinstance(optimized, str):
        return optimized
    raise CannotPutBack(f"put_back takes a version's source, a .py path or an optimize result, not {type(optimized).__name__}.")
