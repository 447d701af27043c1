"""What an optimized version changes in a lifted kernel's launch: the lifted cell and the version run once each
(at the lifted cell's first declared shape), their launches recorded and compared. The kernel's code and the
values of its constexprs and launch options may change; another signature, more kernels, other tensors or other
scalars may not: those change what is computed, not how, and the library's launch cannot follow them.
"""

from __future__ import annotations

import hashlib
import importlib.util
import tempfile
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from kernel_lab.errors import KernelLabError
from kernel_lab.lifting import library
from kernel_lab.lifting.cell import Lifted
from kernel_lab.models import LaunchRecord, TensorRecord
from kernel_lab.profiling import launches


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


def describe(values: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in values.items()) or "the same launch parameters"
