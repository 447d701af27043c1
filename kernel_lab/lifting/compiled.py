"""A kernel ``torch.compile`` wrote, put back: the optimized kernel registered as a ``torch.library.triton_op``
(``torch.ops.kernel_lab.<kernel>``, launched through ``wrap_triton`` so that ``torch.compile`` sees it), and the
compiled graphs' launchers of the old kernel in this process routed to it where Inductor launches the recorded
tensors (Inductor wrote the sizes into the kernel). An op once registered stays registered: torch.library has no
public way to remove one; undoing the patch routes the graphs away from it.
"""

from __future__ import annotations

import inspect
import sys
from types import ModuleType
from typing import Any

from kernel_lab.cells import parse
from kernel_lab.lifting import library
from kernel_lab.lifting import source as src
from kernel_lab.lifting.cell import Lifted
from kernel_lab.lifting.changes import Change, describe
from kernel_lab.lifting.patch import Patch
from kernel_lab.models import LaunchRecord, TensorRecord

NAMESPACE = "kernel_lab"


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
    fn = src.kernel_def(parse(found.text), found.after.kernel)
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
    patch.say(f"registered torch.ops.{NAMESPACE}.{name}: the optimized {lifted.kernel} ({describe(found.values)})")
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
