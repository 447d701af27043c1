"""The process that runs one cell for the judge: the reference's, or one candidate's.

    python -m kernel_lab.verify.sandbox {reference|candidate} --requests FD --replies FD [--device DEV] [--warm]

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
import inspect
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

_perf = time.perf_counter  # taken before any cell runs

import torch  # noqa: E402 - after the clock is taken

from kernel_lab import fastbuild, interpreter  # noqa: E402
from kernel_lab.builds import use_folder_for  # noqa: E402
from kernel_lab.cells import describe, execute  # noqa: E402
from kernel_lab.interpreter import cannot_run  # noqa: E402
from kernel_lab.models import LaunchRecord  # noqa: E402
from kernel_lab.profiling.launches import watch  # noqa: E402
from kernel_lab.verify import handover, protocol  # noqa: E402
from kernel_lab.verify.inputs import VARIANTS  # noqa: E402

POISON_BYTES = {"cuda": 256 << 20, "cpu": 16 << 20}
FLUSH_BYTES = {"cuda": 256 << 20, "cpu": 32 << 20}  # larger than the H100's 50 MB L2
#: untimed calls that start each timed batch on a GPU (at least one): a process that waited for its turn launches
#: its first calls slowly (rowsum_tiny on the H100, a 0.057 ms kernel: 0.12-0.15 ms after 50 ms asleep)
WARM_MS = 0.5
#: GPU clock cycles of a spin after each timed call's cache flush (~0.3 ms on an H100): the host launches the call
#: meanwhile, however slow it is (the judge's processes launched a 0.057 ms kernel in up to 0.25 ms, and the
#: event times of one cell spread over 1.5x; with the spin, over 2%: benchmarks/launch_hidden_h100/)
COVER_CYCLES = 600_000
# the judge's own steps around a timed call, taken before any cell loads: a cell that patches torch cannot do its
# work in them, out of the timed window
_sync_cuda = getattr(torch._C, "_cuda_synchronize", None)
_spin = torch.cuda._sleep
_zero, _copy, _add = torch.Tensor.zero_, torch.Tensor.copy_, torch.add
_Event = torch.cuda.Event
_elapsed = getattr(getattr(torch._C, "_CudaEventBase", None), "elapsed_time", None) or torch.cuda.Event.elapsed_time


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
    if "OutOfMemoryError" in names or "out of memory" in str(exc).lower():
        return "out_of_memory"
    if names & {"CompilationError", "CompileTimeAssertionFailure", "SyntaxError"}:
        return "compile_error"
    return "runtime_error"


class Cell:
    """A loaded cell: its namespace, and where its file is."""

    def __init__(self, path: Path, who: str) -> None:
        self.path, self.who = path, who
        source = path.read_text()
        if use_folder_for(source):  # a load_inline cell: it builds in seconds, and finds what the profiler built
            fastbuild.install()
        try:
            compile(source, str(path), "exec")
        except SyntaxError as exc:
            raise Fail(f"does not compile: {describe(exc, str(path))}", "compile_error") from None
        try:
            self.namespace = execute(source, str(path), {"__name__": f"kernel_lab_{who}", "__file__": str(path)})
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
    On the CPU (malloc, no cache) several blocks of each size seen so far, up to malloc's 32 MB mmap threshold:
    best effort, small tensors may still get unpoisoned memory.
    """
    cuda = device.type == "cuda"
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
    return tuple(v.clone() if isinstance(v, torch.Tensor) else v for v in values)


def changed(after: tuple, before: tuple) -> list[int]:
    """Positions of the tensors whose bits differ between ``after`` and ``before``."""

    def same(a: torch.Tensor, b: torch.Tensor) -> bool:
        if a.shape != b.shape or a.dtype != b.dtype:
            return False
        return torch.equal(a.reshape(-1).view(torch.uint8), b.reshape(-1).view(torch.uint8))

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


class Sandbox:
    """One cell and the inputs it is asked to run on."""

    def __init__(self, who: str, device: str | None) -> None:
        self.who = who
        self.device = device
        self.cell: Cell | None = None
        self.sizes: set[int] = set()
        self.inputs: dict[int, tuple] = {}  # input set id -> its inputs on the device, as made or handed over
        self.lent: list[torch.Tensor] = []  # (reference) results lent to the judge by CUDA IPC, until it asks again
        self.launches: list[LaunchRecord] = []  # the Triton launches of the last call
        watch(lambda record, _: self.launches.append(record))

    # requests ------------------------------------------------------------------------------------------

    def load(self, path: str) -> dict[str, Any]:
        if self.device and self.device.startswith("cuda"):
            if not torch.cuda.is_available():
                raise Fail(
                    f"no CUDA GPU is visible, so nothing can run on {self.device}: verify on a GPU machine or use device='cpu'"
                )
            if torch.device(self.device).index is not None:
                torch.cuda.set_device(torch.device(self.device))
        self.cell = Cell(Path(path), self.who)
        info: dict[str, Any] = {
            "device_name": torch.cuda.get_device_name() if torch.cuda.is_available() else "cpu",
            "params": list(inspect.signature(self.cell.namespace["run"]).parameters),
        }
        if self.who == "reference":
            info.update(self._declared())
        return info

    def _declared(self) -> dict[str, Any]:
        """The shapes the cell declares (SHAPES, else make_inputs' integer defaults) and whether sizes can vary."""
        assert self.cell is not None
        make = self.cell.namespace.get("make_inputs")
        if not callable(make):
            raise Fail("defines no make_inputs() function: a cell needs make_inputs() and run(*inputs)")
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
            inputs = tuple(made) if isinstance(made, (tuple, list)) else (made,)
            inputs = _vary(inputs, spec["variant"])
            self.inputs[spec["id"]] = inputs
            try:
                replies.append(self._lend(*self._expected(spec, inputs)))
            except Fail as fail:
                replies.append(({"id": spec["id"], "error": str(fail)}, []))
        return replies

    def _expected(self, spec: dict[str, Any], inputs: tuple) -> tuple[dict[str, Any], list[torch.Tensor]]:
        work = clone(inputs)
        out = self._call(work)
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
            "input_bytes": sum(v.nbytes for v in inputs if isinstance(v, torch.Tensor)),
        }
        truth = None if spec.get("timing") else self._truth(inputs, tensors)
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

    def _truth(self, inputs: tuple, outputs: list[torch.Tensor]) -> list[torch.Tensor] | None:
        """The reference's outputs on its floating inputs upcast to float64 (else float32, for half-precision
        outputs), when it runs in that precision and returns outputs more precise than its usual ones; else None."""
        assert self.cell is not None
        floats = [t for t in outputs if t.is_floating_point()]
        if not floats or not any(isinstance(v, torch.Tensor) and v.is_floating_point() for v in inputs):
            return None
        bits = max(torch.finfo(t.dtype).bits for t in floats)
        for dtype in (torch.float64, torch.float32):
            if torch.finfo(dtype).bits <= bits:
                continue
            up = tuple(v.to(dtype) if isinstance(v, torch.Tensor) and v.is_floating_point() else v for v in inputs)
            try:
                with contextlib.redirect_stdout(sys.stderr):
                    got = leaves(self.cell.namespace["run"](*up))
                    synchronize(device_of(up))
            except BaseException:  # noqa: BLE001 - the reference is not defined in that precision
                continue
            same = len(got) == len(outputs) and all(g.shape == o.shape for g, o in zip(got, outputs))
            finer = all(
                torch.finfo(g.dtype).bits > torch.finfo(o.dtype).bits for g, o in zip(got, outputs) if o.is_floating_point()
            )
            if same and finer:
                return [g.to(torch.float64) if g.is_floating_point() else g for g in got]
        return None

    def check(
        self, set_id: int, into: list[dict[str, Any]] | None = None, **handed: Any
    ) -> tuple[dict[str, Any], list[torch.Tensor]]:
        """(candidate) Two calls on fresh copies of an input set, each on poisoned memory.

        Only what the judge cannot know already crosses the pipe: the second call's outputs where their bits
        differ from the first's, and the inputs after each call where their bits differ from the set as
        handed over. The first call's outputs go into the buffers the judge lent (``into``, one per output
        of the reference) where they fit them; else through the pipe.
        """
        inputs = self._take(set_id, **handed)
        first_inputs = clone(inputs)
        self.launches.clear()
        first = leaves(self._call(first_inputs))
        first_meta = [meta(t, first_inputs) for t in first]
        second_inputs = clone(inputs)
        second = leaves(self._call(second_inputs))
        second_meta = [meta(t, second_inputs) for t in second]
        repeated = [k for k, (a, b) in enumerate(zip(first, second)) if not changed((a,), (b,))]
        written = [changed(first_inputs, inputs), changed(second_inputs, inputs)]
        mailed = _mail(first, into or [])
        header = {"first": first_meta, "second": second_meta, "repeated": repeated, "written": written, "mailed": mailed}
        tensors = [t for k, t in enumerate(first) if k not in mailed]
        tensors += [t for k, t in enumerate(second) if k not in repeated]
        tensors += [first_inputs[i] for i in written[0]] + [second_inputs[i] for i in written[1]]
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
        mine = [{t.storage for t in launch.tensors().values()} for launch in self.launches if launch.file == str(self.cell.path)]
        written = set().union(*mine)
        return {
            "kernels": kernels,
            "ops": sorted(ops),
            "own_launches": len(mine),
            "outputs_passed_to_own_kernels": all(t.untyped_storage().data_ptr() in written for t in outputs),
        }

    def time(
        self, set_ids: list[int], calls: int, secret: int, keep: list[int] | None = None, first: int = 0, **handed: Any
    ) -> tuple[dict[str, Any], list[torch.Tensor]]:
        """``calls`` timed calls, each on one of the sets with its floating inputs varied (secret per call); the
        batch's calls ``first`` to ``first + calls - 1`` (the reference may be asked for some of a candidate's).

        Every call reads its inputs from the same buffers (a result cached by address goes stale), and a
        fingerprint of each output (random projections, secret) is returned to check the timed results. On a GPU
        each call is queued behind a cache flush and a short spin (:data:`COVER_CYCLES`), as
        ``triton.testing.do_bench`` queues its calls behind its flush: the host launches the call meanwhile, so
        its CUDA-event time is the device's and not the host's launch of it; its wall time (until the device is
        idle, less the flush and the spin) still shows work the events do not see. The batch starts with calls
        that are not timed (:data:`WARM_MS`): the process has waited for its turn.
        ``keep``: the only input sets still needed (a candidate's checks are over: the memory of the others
        goes back to the device, for the candidates timed beside this one).
        """
        start_batch = _perf()
        if keep is not None and set(self.inputs) - set(keep):  # once, the checks over
            self.inputs = {i: v for i, v in self.inputs.items() if i in keep}
            torch.cuda.empty_cache()
        self._take(None, **handed)
        bases = [self.inputs[i] for i in set_ids]
        device = device_of(bases[0])
        buffers = clone(bases[0])
        flush = torch.empty(FLUSH_BYTES.get(device.type, FLUSH_BYTES["cpu"]), dtype=torch.uint8, device=device)
        generator = torch.Generator().manual_seed(secret)
        self.launches.clear()
        events, walls, prints, strays = [], [], [], 0
        baseline = {t.ident for t in threading.enumerate()}
        for _ in range(first):  # the variations of the calls before the first
            torch.rand(2, generator=generator)
        warming = _perf()
        while device.type == "cuda" and (_perf() - warming) * 1e3 < WARM_MS:  # at least once, not timed
            self.cell.run(buffers)  # type: ignore[union-attr]
            synchronize(device)
        for j in range(first, first + calls):
            base = bases[j % len(bases)]
            scale, shift = (0.5 + torch.rand(2, generator=generator)).tolist()
            vary(buffers, base, scale, shift)
            if device.type != "cuda":
                _zero(flush)
            synchronize(device)
            t0 = _perf()
            if device.type == "cuda":  # the call queued behind the flush and the spin: its launch is hidden
                flushing, start, end = (_Event(enable_timing=True) for _ in range(3))
                flushing.record()
                _zero(flush)
                _spin(COVER_CYCLES)
                start.record()
                out = self.cell.run(buffers)  # type: ignore[union-attr]
                end.record()
                synchronize(device)
                event_ms = _elapsed(start, end)
                flush_ms = _elapsed(flushing, start)
            else:
                out = self.cell.run(buffers)  # type: ignore[union-attr]
            stray = [t for t in threading.enumerate() if t.ident not in baseline and t.is_alive()]
            if stray:  # work left running after run() returned is charged to this call
                strays += 1
                for t in stray:
                    t.join(timeout=30)
            synchronize(device)
            if device.type != "cuda":
                event_ms, flush_ms = (_perf() - t0) * 1e3, 0.0
            walls.append((_perf() - t0) * 1e3 - flush_ms)  # until the device is idle, less the flush and the spin
            events.append(event_ms)
            prints.append(_fingerprint(leaves(out), secret))
        header = {"events_ms": events, "walls_ms": walls, "batch_ms": (_perf() - start_batch) * 1e3, "stray_threads": strays}
        return header, [torch.stack(prints)]

    # helpers -------------------------------------------------------------------------------------------

    def _take(
        self, set_id: int | None, handed: dict[str, list[Any]] | None = None, tensors: list[torch.Tensor] | None = None
    ) -> tuple:
        """Keep the input sets a request handed over (``handed``: set id -> how each input travels), and
        return set ``set_id``'s (the reference's own, as made, where this is the reference)."""
        target = torch.device(self.device) if self.device else torch.device("cuda" if torch.cuda.is_available() else "cpu")
        for i, said in (handed or {}).items():
            self.inputs[int(i)] = handover.unpack(said, tensors or [], target)
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
        """``run(*inputs)``; what it left running (threads, device work) is waited for."""
        assert self.cell is not None
        device = device_of(inputs)
        before = {t.ident for t in threading.enumerate()}
        out = self.cell.run(inputs)
        for t in [t for t in threading.enumerate() if t.ident not in before]:
            t.join(timeout=30)
        synchronize(device)
        self.sizes.update(t.nbytes for t in leaves(out))
        return out


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
    """The declared inputs with their floating-point tensors scaled and shifted (see VARIANTS)."""
    if not variant:
        return inputs
    scale, shift = VARIANTS[variant]
    return tuple(v * scale + shift if isinstance(v, torch.Tensor) and v.is_floating_point() else v for v in inputs)


def _device_time(event: Any) -> float:
    """A profiler event's device time in microseconds (the attribute's name changed across torch versions)."""
    for name in ("device_time_total", "cuda_time_total"):
        value = getattr(event, name, None)
        if value:
            return float(value)
    return 0.0


#: elements of each output fingerprinted per timed call, at positions drawn from the call's secret: a result wrong on
#: a share p of its elements escapes one call with probability (1 - p) ** SAMPLED (p = 1e-5: 3e-5), and a call
#: cannot be sped up by getting a few dozen elements of millions wrong
SAMPLED = 1 << 20


_WEIGHTS: dict[tuple[int, str, int, int], tuple[torch.Tensor | None, torch.Tensor]] = {}  # the latest secret's


def _weights(n: int, device: torch.device, secret: int, index: int) -> tuple[torch.Tensor | None, torch.Tensor]:
    """For output ``index`` of ``n`` elements under ``secret``: the positions fingerprinted (None: all of them) and
    four rows of random +-1 float64 weights. Made once per timed batch (its calls share a secret); only the latest
    secret's are kept."""
    key = (n, str(device), secret, index)
    if key not in _WEIGHTS:
        if any(k[2] != secret for k in _WEIGHTS):
            _WEIGHTS.clear()
        g = torch.Generator(device=device).manual_seed(secret + 7919 * index)
        positions = torch.randint(0, n, (SAMPLED,), generator=g, device=device) if n > SAMPLED else None
        signs = torch.randint(0, 2, (4, min(n, SAMPLED)), generator=g, device=device, dtype=torch.int8)
        _WEIGHTS[key] = (positions, signs.to(torch.float64) * 2 - 1)
    return _WEIGHTS[key]


def _fingerprint(outputs: list[torch.Tensor], secret: int) -> torch.Tensor:
    """Per output: four random +-1 projections of up to SAMPLED of its elements (positions and weights from the
    secret), their max |value| and their count.

    Two outputs' projections differ by about the L2 norm of their difference on those elements, so the judge can
    tell a result within tolerance from a wrong or stale one without the whole tensor. Sampled, a 64M-element output's
    fingerprint takes 0.45 ms on the H100; projecting all of it moved about 15 GB a call (float64 weights made from
    int8 in chunks: about 6 ms), and its weights, made anew for each secret, took 256 MB more per timed process a round.
    """
    rows: list[torch.Tensor] = []
    for index, t in enumerate(outputs):
        flat = (torch.view_as_real(t) if t.is_complex() else t).detach().flatten()
        positions, signs = _weights(flat.numel(), flat.device, secret, index)
        v = (flat if positions is None else flat[positions]).to(torch.float64).nan_to_num(nan=0.0, posinf=0.0, neginf=0.0)
        top = v.abs().max().reshape(1) if v.numel() else torch.zeros(1, dtype=torch.float64, device=v.device)
        count = torch.tensor([float(v.numel())], dtype=torch.float64)
        rows.append(torch.cat([torch.cat([signs @ v, top]).cpu(), count]))
    return torch.cat(rows) if rows else torch.zeros(0, dtype=torch.float64)


def vary(buffers: tuple, values: tuple, scale: float, shift: float) -> None:
    """Fill a timed call's input buffers with the set's values, the floating ones scaled and shifted (in one pass)."""
    offset = torch.tensor(shift - 1, dtype=torch.float64)
    for buffer, value in zip(buffers, values):
        if isinstance(buffer, torch.Tensor) and value.is_floating_point():
            _add(offset, value, alpha=scale, out=buffer)  # value * scale + shift - 1
        elif isinstance(buffer, torch.Tensor):
            _copy(buffer, value)


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
    parser.add_argument("who", choices=("reference", "candidate"))
    parser.add_argument("--requests", type=int, required=True)
    parser.add_argument("--replies", type=int, required=True)
    parser.add_argument("--device", default=None)
    parser.add_argument("--warm", action="store_true", help="load the profiler before waiting (a process started ahead)")
    args = parser.parse_args(argv)
    if not torch.cuda.is_available():
        os.environ.setdefault("TRITON_INTERPRET", "1")  # Triton can only run interpreted without a GPU
        interpreter.install()
    elif args.who == "candidate" or args.warm:
        warm_up()
    box = Sandbox(args.who, args.device)

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
        "time": box.time,
        "warm": warm_up,
    }
    handlers = {name: answering(handler) for name, handler in handlers.items()}
    return protocol.serve(args.requests, args.replies, handlers, lambda exc: exc.header() if isinstance(exc, Fail) else None)


if __name__ == "__main__":
    sys.exit(main())
