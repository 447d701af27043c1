"""The process that runs one cell for the judge: the reference's, or one candidate's.

    python -m kernel_lab.verify.sandbox --requests FD --replies FD [--device DEV] [--warm]

It answers the judge's requests (:mod:`kernel_lab.verify.protocol`) and hands back outputs, metadata and
timings; it decides nothing. The reference's process also makes the inputs (its ``make_inputs`` under the
judge's secret seeds) and computes the expected outputs and, where it can, the same outputs in float64 (the
"truth"); all of them go to the judge through its pipe, and the judge hands each candidate copies of its
own (:mod:`kernel_lab.verify.handover`).

Clocks and synchronisation are taken before a cell is loaded, so a cell that replaces ``time.perf_counter``
or ``torch.cuda.Event.elapsed_time`` does not change what is measured; the judge also checks the process's
timings against its own clock.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import functools
import inspect
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import torch

from kernel_lab import fastbuild, interpreter
from kernel_lab.builds import use_folder_for
from kernel_lab.cells import describe, execute
from kernel_lab.errors import out_of_memory
from kernel_lab.interpreter import cannot_run
from kernel_lab.models import LaunchRecord
from kernel_lab.profiling.launches import watch
from kernel_lab.verify import handover, layouts, protocol
from kernel_lab.verify.compare import tolerance
from kernel_lab.verify.inputs import LAYOUT_WORDS, VARIANTS
from kernel_lab.verify.timed import batch_timer, children

POISON_BYTES = {"cuda": 256 << 20, "cpu": 16 << 20}
M_PERTURB = -6  # glibc mallopt: fill what malloc hands out with the complement of the low byte, what it frees with it
_sync_cuda = getattr(torch._C, "_cuda_synchronize", None)  # taken before any cell loads


class Fail(Exception):
    """What went wrong in the cell, in one line, and its failure kind (:data:`kernel_lab.verify.findings.FAILURES`)."""

    def __init__(self, message: str, kind: str = "runtime_error") -> None:
        super().__init__(message)
        self.kind = kind

    def header(self) -> dict[str, Any]:
        """The answer the judge gets: the message and its kind."""
        return {"error": str(self), "kind": self.kind}


def failure_kind(exc: BaseException) -> str:
    """The failure kind of an exception the cell raised."""
    names = {type(e).__name__ for e in (exc, exc.__cause__) if e is not None}
    if cannot_run(exc) is not None:
        return "cannot_run"
    if out_of_memory(exc):
        return "out_of_memory"
    if names & {"CompilationError", "CompileTimeAssertionFailure", "SyntaxError"}:
        return "compile_error"
    return "runtime_error"


def failed(exc: Exception) -> dict[str, Any] | None:
    """The answer to a request that raised: the cell's failure as :class:`Fail` put it, or the device's memory running
    out anywhere (making the inputs handed over, say: the H200 at stop 49, beside three other candidates), which the
    judge checks again alone; None ends the process."""
    if isinstance(exc, Fail):
        return exc.header()
    if failure_kind(exc) == "out_of_memory":
        said = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
        return Fail(f"ran out of the device's memory ({said})", "out_of_memory").header()
    return None


class Cell:
    """A loaded cell: its namespace, and where its file is."""

    def __init__(self, path: Path) -> None:
        self.path = path
        source = path.read_text()
        if use_folder_for(source):  # a load_inline cell: it builds in seconds, and finds what the profiler built
            fastbuild.install()
        try:
            compile(source, str(path), "exec")
        except SyntaxError as exc:
            raise Fail(f"does not compile: {describe(exc, str(path))}", "compile_error") from None
        try:
            # as the notebook's profiler runs a cell: under __main__, whichever side it is (a cell that looks gains nothing)
            self.namespace = execute(source, str(path), {"__name__": "__main__", "__file__": str(path)})
        except BaseException as exc:  # noqa: BLE001 - any failure of the cell is the answer
            kind = failure_kind(exc)
            raise Fail(
                f"raised {describe(exc, str(path))} while loading", "load_error" if kind == "runtime_error" else kind
            ) from None
        if not callable(self.namespace.get("run")):
            raise Fail("defines no run(*inputs) function: a cell needs make_inputs() and run(*inputs)", "load_error")

    def run(self, inputs: tuple) -> Any:
        try:
            return self.namespace["run"](*inputs)
        except BaseException as exc:  # noqa: BLE001
            raise Fail(f"raised {describe(exc, str(self.path))}", failure_kind(exc)) from None


# --- memory: poison, flush, synchronize ---------------------------------------------------------------


_LAID = layouts.laid  # bound before any cell loads: a cell rebinding the module's name changes nothing here


def synchronize(device: torch.device) -> None:
    if device.type == "cuda" and _sync_cuda is not None:
        _sync_cuda()


def poison(device: torch.device, sizes: set[int]) -> None:
    """Fill the memory the allocator will hand out next with NaN (all bits set).

    On a GPU every block the caching allocator holds free is taken (:func:`_cached_free`), so that none is handed
    out unpoisoned: a block that shares its segment with a live tensor stays in the cache after ``empty_cache``,
    and the allocator hands the next request of its size that block, holding what an earlier call left there
    (a variant that writes a quarter of its output would "match"). Then one large block (split for tensors over
    1 MB) and small-pool blocks, several of each size up to 1 MB seen so far, for what comes from new segments.
    On the CPU, glibc's malloc fills every block it hands out from then on (:func:`_perturb_malloc`; where that
    cannot be had, several blocks of each size seen so far, up to malloc's 32 MB mmap threshold: best effort).
    """
    cuda = device.type == "cuda"
    if not cuda and _perturb_malloc():
        return
    big = POISON_BYTES.get(device.type, POISON_BYTES["cpu"])
    held: list[torch.Tensor] = []
    if cuda:
        torch.cuda.empty_cache()
        held = [torch.empty(n, dtype=torch.uint8, device=device) for n in _cached_free(device)]
        big = min(big, torch.cuda.mem_get_info(device)[0] // 2)
    limit = 1 << 20 if cuda else 32 << 20
    sized = [n for n in sorted(sizes) if n <= limit for _ in range(8)]
    sized += [1 << 20] * 16 if cuda else []
    blocks = held + [torch.empty(n, dtype=torch.uint8, device=device) for n in (big, *sized)]
    for block in blocks:
        block.fill_(0xFF)
    del blocks, held


@functools.cache
def _perturb_malloc() -> bool:
    """Whether glibc's malloc now fills each block it hands out with 0xFF (NaN in every float dtype) and each block
    freed with zeros (``mallopt(M_PERTURB, 0x100)``, once per process): no tensor made on the CPU holds what an
    earlier one left, but for the few bytes of malloc's own bookkeeping in a small block."""
    try:
        return bool(ctypes.CDLL(None).mallopt(M_PERTURB, 0x100))
    except (OSError, AttributeError):  # not glibc
        return False


def _cached_free(device: torch.device) -> list[int]:
    """The sizes of the blocks the caching allocator holds free on ``device``, largest first: requested in this
    order while all are held, each request takes a free block of exactly its size (the allocator's best fit)."""
    index = device.index if device.index is not None else torch.cuda.current_device()
    free = [
        block["size"]
        for segment in torch.cuda.memory_snapshot()
        if segment.get("device") == index
        for block in segment["blocks"]
        if block["state"] == "inactive"
    ]
    return sorted(free, reverse=True)


def leaves(value: Any) -> list[torch.Tensor]:
    """The tensors of a result: a tensor, a number, or (nested) tuples and lists of them."""
    if isinstance(value, torch.Tensor):
        return [value]
    if value is None:
        return []
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in leaves(v)]
    if isinstance(value, (bool, int, float)):
        return [torch.tensor(value, dtype=torch.float64 if isinstance(value, float) else None)]
    raise Fail(f"returned a {type(value).__name__}: run must return a tensor or a tuple of tensors", "wrong_shape")


def device_of(values: tuple) -> torch.device:
    for v in values:
        if isinstance(v, torch.Tensor):
            return v.device
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def clone(values: tuple) -> tuple:
    """Fresh copies of the tensors of ``values``, each laid out as it is."""
    return tuple(layouts.copy(v) if isinstance(v, torch.Tensor) else v for v in values)


def changed(after: tuple, before: tuple) -> list[int]:
    """Positions of the tensors whose bits differ between ``after`` and ``before``."""

    def same(a: torch.Tensor, b: torch.Tensor) -> bool:
        if a.shape != b.shape or a.dtype != b.dtype:
            return False
        return torch.equal(*(t.contiguous().view(-1).view(torch.uint8) for t in (a, b)))

    return [i for i, (a, b) in enumerate(zip(after, before)) if isinstance(b, torch.Tensor) and not same(a, b)]


def _span(t: torch.Tensor) -> tuple[int, int]:
    storage = t.untyped_storage()
    return storage.data_ptr(), storage.data_ptr() + storage.nbytes()


def meta(t: torch.Tensor, inputs: tuple) -> dict[str, Any]:
    """What an output is, beside its values: its layout and whether it shares memory with an input."""
    start, end = _span(t)
    aliased = [
        i
        for i, v in enumerate(inputs)
        if isinstance(v, torch.Tensor) and v.numel() and t.numel() and _span(v)[0] < end and start < _span(v)[1]
    ]
    return {
        "shape": list(t.shape),
        "dtype": str(t.dtype),
        "device": t.device.type,
        "strides": list(t.stride()),
        "contiguous": t.is_contiguous(),
        "aliases_input": aliased,
        "storage": [start, end],
    }


def as_inputs(made: Any) -> tuple:
    """What make_inputs returned, as the arguments of run: a tuple or list as they are, anything else alone."""
    return tuple(made) if isinstance(made, (tuple, list)) else (made,)


def input_bytes(inputs: tuple) -> int:
    """The bytes a call's input tensors hold: how the judge ranks declared shapes (the heaviest is its headline), and
    the screen picks the one it times on."""
    return sum(v.nbytes for v in inputs if isinstance(v, torch.Tensor))


@contextlib.contextmanager
def seeded(seed: int) -> Iterator[None]:
    """``torch.manual_seed(seed)``, and a cell's own ``torch.manual_seed(s)`` becomes ``s + 7919 * seed``.

    Cells often seed inside make_inputs (the samples do): without this, every seed would give the same inputs.
    """
    original = torch.manual_seed
    original(seed)
    torch.manual_seed = lambda s: original(int(s) + 7919 * seed)  # type: ignore[assignment]
    try:
        yield
    finally:
        torch.manual_seed = original


# --- the process --------------------------------------------------------------------------------------


def kept(dtype: torch.dtype) -> torch.dtype:
    """The dtype a truth is kept in for an output of ``dtype``: float64, or float32 for 16 bits or fewer, whose
    rounding (2^-24) is far below theirs (2^-11 at best) and which halves what the judge keeps (Unsloth's cross
    entropy backward: 3.3 GB instead of 6.6 GB of truth for each of its largest input sets)."""
    return torch.float32 if dtype.is_floating_point and torch.finfo(dtype).bits <= 16 else torch.float64


class Sandbox:
    """One cell and the inputs it is asked to run on."""

    def __init__(self, device: str | None) -> None:
        self.device = device
        self.cell: Cell | None = None
        self.sizes: set[int] = set()
        self.inputs: dict[int, tuple] = {}  # input set id -> its inputs on the device, as made or handed over
        self.lent: list[torch.Tensor] = []  # (reference) results lent to the judge by CUDA IPC, until it asks again
        self.launches: list[LaunchRecord] = []  # the Triton launches of the last call
        watch(lambda record, _: self.launches.append(record))
        self.lent_slots: dict[str, torch.Tensor] = {}  # the judge's buffers for timed calls, by its key
        self._batch = batch_timer(leaves)  # bound now, before the cell loads

    # requests ------------------------------------------------------------------------------------------

    def load(self, path: str) -> dict[str, Any]:
        if self.device and self.device.startswith("cuda"):
            if not torch.cuda.is_available():
                raise Fail(
                    f"no CUDA GPU is visible, so nothing can run on {self.device}: verify on a GPU machine or use device='cpu'"
                )
            if torch.device(self.device).index is not None:
                torch.cuda.set_device(torch.device(self.device))
        self.cell = Cell(Path(path))
        info: dict[str, Any] = {
            "device_name": torch.cuda.get_device_name() if torch.cuda.is_available() else "cpu",
            "params": list(inspect.signature(self.cell.namespace["run"]).parameters),
        }
        return info | self._declared()

    def _declared(self) -> dict[str, Any]:
        """The shapes the cell declares (SHAPES, else make_inputs' integer defaults) and whether sizes can vary."""
        assert self.cell is not None
        make = self.cell.namespace.get("make_inputs")
        if not callable(make):  # a candidate needs none (the reference's inputs are handed to it); the judge says so
            return {"shapes": [[]], "sizes_known": False, "make_inputs": False}
        declared = self.cell.namespace.get("SHAPES")
        if declared:
            shapes = [list(s) if isinstance(s, (tuple, list)) else [s] for s in declared]
            return {"shapes": shapes, "sizes_known": True}
        params = [
            p for p in inspect.signature(make).parameters.values() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
        defaults = [p.default for p in params]
        if params and all(isinstance(d, int) and not isinstance(d, bool) for d in defaults):
            return {"shapes": [defaults], "sizes_known": True}
        return {"shapes": [[]], "sizes_known": False}

    def make(self, sets: list[dict[str, Any]]) -> list[tuple[dict[str, Any], list[torch.Tensor]]]:
        """(reference only) Make each input set and run the reference on it."""
        assert self.cell is not None
        make = self.cell.namespace["make_inputs"]
        replies: list[tuple[dict[str, Any], list[torch.Tensor]]] = []
        for spec in sets:
            try:
                with seeded(spec["seed"]):
                    made = make(*spec["shape"])
            except BaseException as exc:  # noqa: BLE001
                replies.append(({"id": spec["id"], "error": f"make_inputs raised {describe(exc, str(self.cell.path))}"}, []))
                continue
            inputs = as_inputs(made)
            with seeded(spec["seed"] + 1):
                inputs = _vary(inputs, spec["variant"])
            try:
                if spec.get("layout"):
                    inputs = self._laid(inputs, spec["layout"])
                self.inputs[spec["id"]] = inputs
                replies.append(self._lend(*self._expected(spec, inputs)))
            except Fail as fail:
                replies.append(({"id": spec["id"], "error": str(fail), "kind": fail.kind}, []))
        return replies

    def heaviest(self, shapes: list[list[Any]], seed: int) -> list[Any]:
        """Of ``shapes``, the one whose inputs hold the most bytes (:func:`input_bytes`, the first of equals): the
        shape the judge's headline times. Each is made once and let go; one whose make_inputs raises comes last."""
        assert self.cell is not None
        make = self.cell.namespace["make_inputs"]

        def weight(shape: list[Any]) -> int:
            try:
                with seeded(seed):
                    made = make(*shape)
            except Exception:  # noqa: BLE001 - said when that shape is made for real
                return -1
            return input_bytes(as_inputs(made))

        return shapes[0] if len(shapes) < 2 else max(shapes, key=weight)

    def _laid(self, inputs: tuple, layout: str) -> tuple:
        """``inputs`` laid out as ``layout`` says, when the reference's answer on them is its answer on ``inputs``
        (a reference that assumes contiguous inputs is not defined on others); else :class:`Fail`."""
        if not any(isinstance(v, torch.Tensor) and layouts.applies(v, layout) for v in inputs):
            raise Fail(f"has no input that can be laid out so ({LAYOUT_WORDS[layout]})", "not_applicable")
        laid = tuple(layouts.laid(v, layout) if isinstance(v, torch.Tensor) else v for v in inputs)
        plain, other = clone(inputs), clone(laid)
        want, got = leaves(self._call(plain)), leaves(self._call(other))  # with the inputs each call wrote
        want += [v for v in plain if isinstance(v, torch.Tensor)]
        got += [v for v in other if isinstance(v, torch.Tensor)]
        if len(want) != len(got) or not all(_near(g, w) for g, w in zip(got, want)):
            raise Fail("gives another answer when its inputs are not contiguous (it assumes contiguous inputs)")
        return laid

    def _expected(self, spec: dict[str, Any], inputs: tuple) -> tuple[dict[str, Any], list[torch.Tensor]]:
        work = clone(inputs)
        started = time.perf_counter()
        out = self._call(work)
        call_ms = (time.perf_counter() - started) * 1e3
        tensors = leaves(out)
        if os.environ.get("TRITON_INTERPRET") == "1" and any(
            t.dtype == torch.bfloat16 for t in [*tensors, *(v for v in inputs if isinstance(v, torch.Tensor))]
        ):
            raise Fail(  # github.com/triton-lang/triton/issues/11584
                "uses bfloat16 tensors, which Triton's CPU interpreter computes wrongly (on the raw bits): the cell needs"
                " a GPU (or float32 inputs when there is none)",
                "cannot_run",
            )
        in_place = changed(work, inputs)
        expected = tensors + [work[i] for i in in_place]
        header: dict[str, Any] = {
            "id": spec["id"],
            "outputs": [meta(t, work) for t in tensors],
            "in_place": in_place,
            "input_bytes": input_bytes(inputs),
            "call_ms": call_ms,
        }
        truth, header["truth_skipped"] = (None, "") if spec.get("timing") else self._truth(inputs, tensors)
        header["truth"] = truth is not None
        header["inputs"] = [i for i, v in enumerate(inputs) if isinstance(v, torch.Tensor)]  # for the judge to keep
        try:
            header["values"] = {i: handover.encode(v) for i, v in enumerate(inputs) if not isinstance(v, torch.Tensor)}
        except handover.Unsendable as kind:
            raise Fail(
                f"make_inputs returned an input of type {kind}: inputs must be tensors, numbers, strings or dtypes"
            ) from None
        return header, expected + (truth or []) + [v for v in inputs if isinstance(v, torch.Tensor)]

    def _lend(self, header: dict[str, Any], tensors: list[torch.Tensor]) -> tuple[dict[str, Any], list[torch.Tensor]]:
        """(reference) Results on the GPU lent to the judge by CUDA IPC rather than sent through the pipe
        (about 0.6 s per input set of 256 MB on the H100); kept here until the judge asks again."""
        if not tensors or not all(t.is_cuda for t in tensors):
            return header, tensors
        self.lent += tensors
        return {**header, "lent": [handover.share(t.contiguous()) for t in tensors]}, []

    def _truth(self, inputs: tuple, outputs: list[torch.Tensor]) -> tuple[list[torch.Tensor] | None, str]:
        """(the reference's outputs on its floating inputs upcast to float64, else float32 for half-precision
        outputs, when it runs in that precision and returns outputs more precise than its usual ones, each kept as
        :func:`kept` says; why not where it does not: "" when there is nothing to upcast)."""
        assert self.cell is not None
        floats = [t for t in outputs if t.is_floating_point()]
        if not floats or not any(isinstance(v, torch.Tensor) and v.is_floating_point() for v in inputs):
            return None, ""
        bits = max(torch.finfo(t.dtype).bits for t in floats)
        why = f"its outputs are {floats[0].dtype} even on more precise inputs (it pins their dtype)".replace("torch.", "")
        for dtype in (torch.float64, torch.float32):
            if torch.finfo(dtype).bits <= bits:
                continue
            up = tuple(v.to(dtype) if isinstance(v, torch.Tensor) and v.is_floating_point() else v for v in inputs)
            try:
                with contextlib.redirect_stdout(sys.stderr):
                    got = leaves(self.cell.namespace["run"](*up))
                    synchronize(device_of(up))
            except BaseException as exc:  # noqa: BLE001 - the reference is not defined in that precision
                why = f"it raised {type(exc).__name__} on {dtype} inputs".replace("torch.", "")
                continue
            same = len(got) == len(outputs) and all(g.shape == o.shape for g, o in zip(got, outputs))
            finer = all(
                torch.finfo(g.dtype).bits > torch.finfo(o.dtype).bits for g, o in zip(got, outputs) if o.is_floating_point()
            )
            if same and finer:
                return [g.to(kept(o.dtype)) if g.is_floating_point() else g for g, o in zip(got, outputs)], ""
        return None, why

    def check(
        self, set_id: int, into: list[dict[str, Any]] | None = None, **handed: Any
    ) -> tuple[dict[str, Any], list[torch.Tensor]]:
        """(candidate) Two calls on fresh copies of an input set, each on poisoned memory; the set is not kept once
        checked (a candidate holds one set at a time, not every set of gigabytes it is checked on).

        Only what the judge cannot know already crosses the pipe: the second call's outputs where their bits
        differ from the first's, and the inputs after each call where their bits differ from the set as
        handed over (after the second call, only where they also differ from what the first wrote there: an
        in-place cell would send each written input twice). The first call's outputs go into the buffers the
        judge lent (``into``, one per output of the reference) where they fit them; else through the pipe.
        """
        inputs = self._take(set_id, **handed)
        del self.inputs[set_id]
        first_inputs = clone(inputs)
        self.launches.clear()
        first = leaves(self._call(first_inputs))
        first_meta = [meta(t, first_inputs) for t in first]
        second_inputs = clone(inputs)
        second = leaves(self._call(second_inputs))
        second_meta = [meta(t, second_inputs) for t in second]
        repeated = [k for k, (a, b) in enumerate(zip(first, second)) if not changed((a,), (b,))]
        written = [changed(first_inputs, inputs), changed(second_inputs, inputs)]
        rewritten = [i for i in written[1] if i in written[0] and not changed((first_inputs[i],), (second_inputs[i],))]
        mailed = _mail(first, into or [])
        header = {"first": first_meta, "second": second_meta, "repeated": repeated, "written": written, "mailed": mailed}
        header["rewritten"] = rewritten  # inputs the second call wrote with the first's bits
        tensors = [t for k, t in enumerate(first) if k not in mailed]
        tensors += [t for k, t in enumerate(second) if k not in repeated]
        tensors += [first_inputs[i] for i in written[0]] + [second_inputs[i] for i in written[1] if i not in rewritten]
        return header, tensors

    def observe(self, set_id: int, **handed: Any) -> dict[str, Any]:
        """What one call launches: GPU kernels with their time, aten operators, Triton launches of the cell."""
        assert self.cell is not None
        inputs = clone(self._take(set_id, **handed))
        device = device_of(inputs)
        activities = [torch.profiler.ProfilerActivity.CPU]
        if device.type == "cuda":
            activities.append(torch.profiler.ProfilerActivity.CUDA)
        self.launches.clear()
        self.poison_for(inputs)  # before the profiler starts: its fills are not the cell's work
        with torch.profiler.profile(activities=activities) as prof:
            out = self._run(inputs)
        outputs = leaves(out)
        kernels: dict[str, float] = {}
        ops: set[str] = set()
        for e in prof.events():
            if e.device_type == torch.autograd.DeviceType.CUDA:
                kernels[e.name] = kernels.get(e.name, 0.0) + _device_time(e)
            elif e.name.startswith("aten::"):
                ops.add(e.name)
        del outputs
        mine = sum(launch.file == str(self.cell.path) for launch in self.launches)
        return {"kernels": kernels, "ops": sorted(ops), "own_launches": mine}

    def knockout(self, set_id: int, into: list[dict[str, Any]] | None = None, **handed: Any) -> tuple[dict, list]:
        """One call with the cell's own Triton kernels made to do nothing, on poisoned memory: its outputs (into the
        judge's buffers where they fit), or what it raised (then nothing could pass for a result)."""
        assert self.cell is not None
        inputs = clone(self._take(set_id, **handed))
        with own_kernels_off(str(self.cell.path)):
            try:
                outputs = leaves(self._call(inputs))
            except Fail as fail:
                return {"raised": str(fail)}, []
        mailed = _mail(outputs, into or [])
        return {"count": len(outputs), "mailed": mailed}, [t for k, t in enumerate(outputs) if k not in mailed]

    def time(
        self,
        calls: list[list[dict[str, Any]]],
        boxes: list[list[dict[str, Any]]] | None = None,
        keep: list[int] | None = None,
        tensors: list[torch.Tensor] | None = None,
        written: bool = False,
    ) -> tuple[dict[str, Any], list[torch.Tensor]]:
        """Timed calls on the inputs the judge made for each (:mod:`kernel_lab.verify.timed`): each call's arguments
        (``calls``: a value, a tensor in the request, or a buffer the judge lent once and names by a key), the outputs
        into the buffers it lends (``boxes``: a GPU) or back through the pipe. ``keep``: the only input sets still
        needed (a candidate's checks are over: the memory of the others goes back to the device, for the candidates
        timed beside this one). ``written``: the reference writes its inputs in place, so the untimed calls that start
        the batch run on a copy of the first call's inputs, never on them."""
        if keep is not None:  # once, the checks over
            self.forget(keep)
        assert self.cell is not None
        inputs = [tuple(self._item(item, tensors or []) for item in call) for call in calls]
        into = [[self._item(item, []) for item in call] for call in boxes] if boxes else [[] for _ in calls]
        mine = str(self.cell.path)
        self.launches.clear()
        return self._batch(self.cell.run, inputs, into, lambda: sum(launch.file == mine for launch in self.launches), written)

    def forget(self, keep: list[int]) -> dict[str, Any]:
        """Let go of the input sets not in ``keep``, their memory back to the device (for a candidate checked again
        alone after it ran out of memory beside this one, or timed beside it)."""
        if set(self.inputs) - set(keep):
            self.inputs = {i: v for i, v in self.inputs.items() if i in keep}
            if torch.cuda.is_available():
                torch.cuda.empty_cache()
        return {"kept": sorted(self.inputs)}

    def unlend(self) -> dict[str, Any]:
        """Let go of the judge's buffers for timed calls: mapped from its memory, they keep it from freeing them (it
        times a batch again in fewer processes when its memory ran out, in buffers lent anew)."""
        let_go, self.lent_slots = len(self.lent_slots), {}
        return {"let_go": let_go}

    def _item(self, item: dict[str, Any], tensors: list[torch.Tensor]) -> Any:
        """One argument (or output buffer) of a timed call, as the judge handed it over."""
        if "value" in item:
            return handover.decode(item["value"])
        if "tensor" in item:  # through the pipe, into this place's own buffer (as on a GPU: one per place)
            sent = tensors[item["tensor"]]
            kept = self.lent_slots.get(item["slot"])
            if kept is None or kept.shape != sent.shape or kept.dtype != sent.dtype:
                kept = self.lent_slots[item["slot"]] = torch.empty_like(sent, device=self._target)
            return kept.copy_(sent)
        if "lent" in item:  # the judge's buffer, mapped once and kept under its key
            self.lent_slots[item["slot"]] = handover.mapped(item["lent"])
        return self.lent_slots[item["slot"]]

    @property
    def _target(self) -> torch.device:
        return torch.device(self.device) if self.device else torch.device("cuda" if torch.cuda.is_available() else "cpu")

    # helpers -------------------------------------------------------------------------------------------

    def _take(
        self, set_id: int | None, handed: dict[str, list[Any]] | None = None, tensors: list[torch.Tensor] | None = None
    ) -> tuple:
        """Keep the input sets a request handed over (``handed``: set id -> how each input travels), and
        return set ``set_id``'s (the reference's own, as made, where this is the reference)."""
        for i, said in (handed or {}).items():
            self.inputs[int(i)] = handover.unpack(said, tensors or [], self._target, _LAID)
        return self.inputs[set_id] if set_id is not None else ()

    def _call(self, inputs: tuple) -> Any:
        """``run(*inputs)`` on poisoned memory."""
        self.poison_for(inputs)
        return self._run(inputs)

    def poison_for(self, inputs: tuple) -> None:
        """Poison the memory a call on ``inputs`` will be handed (sizes of every tensor seen so far)."""
        self.sizes.update(v.nbytes for v in inputs if isinstance(v, torch.Tensor))
        poison(device_of(inputs), self.sizes)

    def _run(self, inputs: tuple) -> Any:
        """``run(*inputs)``; what it left running (threads, child processes, device work) is waited for."""
        assert self.cell is not None
        device = device_of(inputs)
        before, procs = {t.ident for t in threading.enumerate()}, children()
        out = self.cell.run(inputs)
        for t in [t for t in threading.enumerate() if t.ident not in before]:
            t.join(timeout=30)
        for pid in children() - procs:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)
        synchronize(device)
        self.sizes.update(t.nbytes for t in leaves(out))
        return out


@contextlib.contextmanager
def own_kernels_off(file: str) -> Iterator[None]:
    """While held, a launch of a Triton kernel defined in ``file`` does nothing (compiled or interpreted)."""
    from triton.runtime import interpreter as interpreted
    from triton.runtime import jit

    classes = (jit.JITFunction, interpreted.InterpretedFunction)
    originals = [cls.run for cls in classes]
    for cls, original in zip(classes, originals):

        def run(self: Any, *args: Any, _original: Callable[..., Any] = original, **kwargs: Any) -> Any:
            if self.fn.__code__.co_filename == file:
                return None
            return _original(self, *args, **kwargs)

        cls.run = run
    try:
        yield
    finally:
        for cls, original in zip(classes, originals):
            cls.run = original


def _mail(outputs: list[torch.Tensor], boxes: list[dict[str, Any]]) -> list[int]:
    """Copy each output into the judge's buffer lent for it, where it fits (same shape, dtype and device);
    the positions copied, all of them there once this returns."""
    mailed = []
    for k, (t, lent) in enumerate(zip(outputs, boxes)):
        box = handover.mapped(lent)
        if box.shape == t.shape and box.dtype == t.dtype and box.device == t.device:
            box.copy_(t)
            mailed.append(k)
        del box
    if mailed:
        synchronize(outputs[mailed[0]].device)
    return mailed


def _vary(inputs: tuple, variant: str) -> tuple:
    """The declared inputs with their floating-point tensors scaled and shifted (see VARIANTS); "mixed": each
    element scaled by 10^k, k drawn from -3..3 (under the set's seed)."""
    if not variant:
        return inputs
    scale, shift = VARIANTS[variant]

    def varied(v: torch.Tensor) -> torch.Tensor:
        if variant == "mixed":
            powers = torch.randint(-3, 4, v.shape).to(device=v.device, dtype=torch.float64)
            return (v.double() * 10.0**powers).to(v.dtype)
        return v * scale + shift

    return tuple(varied(v) if isinstance(v, torch.Tensor) and v.is_floating_point() else v for v in inputs)


def _near(got: torch.Tensor, want: torch.Tensor) -> bool:
    """Whether the reference's answers on two layouts of one input set agree (to its dtype's tolerance)."""
    if got.shape != want.shape or got.dtype != want.dtype:
        return False
    if not got.is_floating_point():
        return torch.equal(got, want)
    rtol, atol = tolerance(got.dtype, False, None, None)
    return bool(torch.allclose(got.double(), want.double(), rtol=rtol, atol=atol))


def _device_time(event: Any) -> float:
    """A profiler event's device time in microseconds (the attribute's name changed across torch versions)."""
    for name in ("device_time_total", "cuda_time_total"):
        value = getattr(event, name, None)
        if value:
            return float(value)
    return 0.0


def warm_triton() -> None:
    """Do while the process waits what Triton's first launch does once per process, and needs no CUDA context: hash
    Triton's own compiler (every kernel's cache key holds that hash: 0.4 s on the H100, where the first launch of a
    cached kernel took 0.5 s without it and 0.15 s with it) and load its driver's helpers."""
    try:
        from triton.runtime import driver
        from triton.runtime.cache import triton_key
    except ImportError:  # a Triton without them: the first launch pays as before
        return
    triton_key()
    with contextlib.suppress(RuntimeError):  # no backend Triton can drive here: its launches will say so
        driver.active.utils  # noqa: B018 - loading it is the point


def warm_up(**_: Any) -> dict[str, Any]:
    """Load what the profiler loads on first use (torch._inductor and sympy: about 5 s on the H100) and what Triton's
    first launch does once per process (:func:`warm_triton`) while the process waits (a candidate: for its cell; a
    reference started ahead: for its cell too; else once its results are made, while the judge's screen times), not
    while the judge waits for the kernels it launches."""
    if torch.cuda.is_available():
        warm_triton()
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]):
            pass
    return {}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m kernel_lab.verify.sandbox")
    parser.add_argument("--requests", type=int, required=True)
    parser.add_argument("--replies", type=int, required=True)
    parser.add_argument("--device", default=None)
    parser.add_argument("--warm", action="store_true", help="load the profiler before waiting (a process started ahead)")
    args = parser.parse_args(argv)
    if not torch.cuda.is_available():
        os.environ.setdefault("TRITON_INTERPRET", "1")  # Triton can only run interpreted without a GPU
        interpreter.install()
    elif args.warm:
        warm_up()
    sys.argv = [""]  # nothing of the judge's command line for the cell to read (as an interactive Python has)
    box = Sandbox(args.device)

    def answering(handler: Callable[..., Any]) -> Callable[..., Any]:
        def answer(**request: Any) -> Any:
            box.lent.clear()  # the judge has taken what was lent before it asks again
            return handler(**request)

        return answer

    handlers: dict[str, Callable[..., Any]] = {
        "load": box.load,
        "make": lambda **request: [{"sets": len(sets := box.make(**request))}, *sets],  # a count, then each set
        "check": box.check,
        "observe": box.observe,
        "knockout": box.knockout,
        "time": box.time,
        "forget": box.forget,
        "unlend": box.unlend,
        "warm": warm_up,
    }
    handlers = {name: answering(handler) for name, handler in handlers.items()}
    return protocol.serve(args.requests, args.replies, handlers, failed)


if __name__ == "__main__":
    sys.exit(main())
