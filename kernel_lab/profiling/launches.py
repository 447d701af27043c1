"""What a cell launches, recorded as it runs: each Triton launch's kernel, grid, options and arguments (tensors by
shape, dtype, strides and where they live), and the tensors the cell's ``run`` takes and returns.

:func:`watch` reports every Triton launch (compiled or interpreted) once it has returned; the judge's processes use
it to tell whose work an output is, and the profiling runner (:class:`Recorder`) writes what the profiled ``run``
launched beside the report (``launches.json``), for the cell-level reading and for lifting a kernel into a cell.
Launches made by CUDA C++ (``load_inline``) or by a compiled graph's own launchers are not seen here.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path
from typing import Any

from kernel_lab.models import CellRecord, LaunchRecord, TensorRecord

_watchers: list[Callable[[LaunchRecord, tuple], None]] = []


def tensor_record(t: Any) -> TensorRecord:
    """A tensor as recorded: its shape, dtype, strides, and where it lives (its storage's address and size)."""
    storage = t.untyped_storage()
    return TensorRecord(
        tuple(t.shape),
        str(t.dtype).removeprefix("torch."),
        tuple(t.stride()),
        storage.data_ptr(),
        t.storage_offset() * t.element_size(),
        storage.nbytes(),
    )


def _value(value: Any) -> Any:
    """An argument as recorded: a tensor's record, a number, a string, or its text."""
    if hasattr(value, "untyped_storage"):
        return tensor_record(value)
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


def _launch(fn: Any, args: tuple, kwargs: dict[str, Any]) -> LaunchRecord:
    named = {**dict(zip(getattr(fn, "arg_names", ()), args)), **kwargs}
    grid = named.pop("grid", None)
    if callable(grid):
        try:
            grid = grid(named)
        except Exception:  # noqa: BLE001 - a grid the record cannot evaluate is left out
            grid = None
    code = fn.fn.__code__
    return LaunchRecord(
        kernel=fn.fn.__name__,
        file=code.co_filename,
        line=code.co_firstlineno,
        grid=tuple(int(g) for g in grid) if isinstance(grid, (tuple, list)) else None,
        args=tuple((name, _value(v)) for name, v in named.items() if name not in ("warmup",)),
    )


def watch(on_launch: Callable[[LaunchRecord, tuple], None]) -> None:
    """Call ``on_launch(record, args)`` after each Triton launch that returned (a launch that raised did not
    happen); ``args`` are the launch's positional arguments themselves. Installed once per process."""
    _watchers.append(on_launch)
    if len(_watchers) > 1:
        return
    try:
        from triton.runtime import interpreter, jit
    except ImportError:
        return
    for cls in (jit.JITFunction, interpreter.InterpretedFunction):

        def run(self: Any, *args: Any, _original: Callable[..., Any] = cls.run, **kwargs: Any) -> Any:
            result = _original(self, *args, **kwargs)
            record = _launch(self, args, kwargs)
            for watcher in list(_watchers):
                watcher(record, args)
            return result

        cls.run = run


INDUCTOR = "torch._inductor.runtime.triton_heuristics"


def _inductor_launch(autotuner: Any, args: tuple) -> LaunchRecord:
    """A launch of a kernel ``torch.compile`` wrote, as its launcher ran it: arguments by the kernel's signature,
    and the configuration its launcher holds (block sizes, ``num_warps``, ``num_stages``)."""
    named = dict(zip(autotuner.triton_meta.get("signature", {}), args))
    launchers = getattr(autotuner, "launchers", [])
    config = launchers[0].config if len(launchers) == 1 else None
    if config is not None:
        named |= {**config.kwargs, "num_warps": config.num_warps, "num_stages": config.num_stages}
    fn = autotuner.fn.fn if hasattr(autotuner.fn, "fn") else autotuner.fn
    file = getattr(autotuner, "filename", None) or fn.__code__.co_filename
    return LaunchRecord(
        fn.__name__, file, fn.__code__.co_firstlineno, None, tuple((n, _value(v)) for n, v in named.items()), "inductor"
    )


def watch_compiled(on_launch: Callable[[LaunchRecord, tuple], None]) -> None:
    """Also report launches of the kernels ``torch.compile`` wrote (its launchers bypass ``JITFunction.run``), when
    Inductor's runtime is loaded (a cell that compiled something has loaded it)."""
    import sys

    module = sys.modules.get(INDUCTOR)
    autotuner = getattr(module, "CachingAutotuner", None)
    if autotuner is None or getattr(autotuner.run, "_kernel_lab", False):
        return
    original = autotuner.run

    def run(self: Any, *args: Any, stream: Any, **kwargs: Any) -> Any:
        result = original(self, *args, stream=stream, **kwargs)
        if not kwargs.get("benchmark_run"):
            on_launch(_inductor_launch(self, args), args)
        return result

    run._kernel_lab = True  # type: ignore[attr-defined]
    autotuner.run = run


class Recorder:
    """Records what the cell's ``run`` launches while :meth:`recording` is held (the profiled range)."""

    def __init__(self) -> None:
        self.launches: list[LaunchRecord] = []
        self._on = False
        watch(self._seen)
        watch_compiled(self._seen)

    def _seen(self, record: LaunchRecord, args: tuple) -> None:
        if self._on:
            self.launches.append(record)

    @contextmanager
    def recording(self) -> Iterator[None]:
        self.launches, self._on = [], True
        try:
            yield
        finally:
            self._on = False

    def record(self, inputs: tuple, output: Any) -> CellRecord:
        """The record of one profiled ``run(*inputs)`` that returned ``output``."""
        return CellRecord(tuple(_tensors(inputs)), tuple(_tensors(output)), tuple(self.launches))


def _tensors(value: Any) -> Iterator[TensorRecord]:
    if hasattr(value, "untyped_storage"):
        yield tensor_record(value)
    elif isinstance(value, (tuple, list)):
        for v in value:
            yield from _tensors(v)


def record_path(report: Path) -> Path:
    """Where the record of a report's run lies: ``profile.ncu-rep`` -> ``profile.launches.json``."""
    return report.with_name(report.name.split(".")[0] + ".launches.json")


def save(record: CellRecord, path: Path) -> None:
    path.write_text(json.dumps(asdict(record)))


def load(path: Path) -> CellRecord | None:
    """The record written beside a report, or None (none was written, or it cannot be read)."""
    try:
        return CellRecord.from_json(json.loads(path.read_text()))
    except (OSError, ValueError, KeyError, TypeError):
        return None
