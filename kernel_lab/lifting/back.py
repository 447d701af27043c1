"""Put an optimized kernel back where the model launches it, for this process: reversible and logged.

:func:`put_back` keeps what the optimized version changed (:mod:`kernel_lab.lifting.changes`: the kernel's code and the
values of its constexprs and launch options, ``BLOCK_SIZE``, ``num_warps``...) and puts it where the model runs:

* A library's kernel: every reference to the library's kernel object in this process's modules is replaced by a
  :class:`Replacement`, which takes the library's launch (``kernel[grid](...)``) and launches the new kernel with
  the new values where the library launches with the configuration that was profiled and verified (the same
  constexprs and options, the same dtypes; the same sizes too when the cell's sizes could not vary); any other
  launch, and one whose fixed grid the new block sizes do not fit, runs the library's own kernel. A grid given
  as a function of the launch's meta-parameters (Triton's convention) is evaluated with the new values.
* A kernel ``torch.compile`` wrote: the new kernel is registered as a ``torch.library.triton_op``
  (``torch.ops.kernel_lab.<kernel>``, its launch inside ``wrap_triton`` so that ``torch.compile`` sees it), and the
  compiled graph's launcher of the old kernel is routed to the op where Inductor launches the recorded tensors
  (:mod:`kernel_lab.lifting.compiled`).

:meth:`~kernel_lab.lifting.patch.Patch.undo` (or leaving ``with put_back(...):``) puts the originals back. Every step
is logged on the ``kernel_lab.lift`` logger and kept in the patch's ``log``.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

from kernel_lab.lifting import library
from kernel_lab.lifting.cell import Lifted
from kernel_lab.lifting.changes import CannotPutBack, Change, change, describe
from kernel_lab.lifting.compiled import put_back_compiled
from kernel_lab.lifting.patch import ACTIVE, Patch
from kernel_lab.models import TensorRecord


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
        patch.say(f"replaced {where.__name__}.{name} with the optimized {lifted.kernel} ({describe(found.values)})")
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
