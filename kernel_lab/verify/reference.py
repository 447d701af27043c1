"""The reference: the user's own cell in a process of its own, the input sets the judge plans for it, and its results.

Its lifecycle, once per judge (one ``%%optimize`` session): :meth:`Reference.load` (its process loads the cell, ahead
of need), :meth:`Reference.prepare` (the input sets, made one at a time by its ``make_inputs`` under secret seeds,
each a turn on the GPU, and its results on each, kept where the judge compares them), :meth:`Reference.observe`
(what one call launches, once), :meth:`Reference.close`. When its process stops, :attr:`Reference.broken` says why,
and every verdict says so.
"""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kernel_lab.verify import handover, workers
from kernel_lab.verify.findings import Finding
from kernel_lab.verify.inputs import InputSet, plan
from kernel_lab.verify.turns import Turns
from kernel_lab.verify.verdict import Verdict
from kernel_lab.verify.workers import Stopped, Worker, ended

if TYPE_CHECKING:
    import torch

REFERENCE_TIMEOUT = 600.0  # seconds the reference may take to load and make its results
#: timed calls a candidate makes at the least, per declared shape (timing's MIN_SAMPLES), for the CPU's estimate
TIMED_CALLS = 10
RESIDENT_SHARE = 0.25  # of the GPU's memory, at most, for the reference's results kept there (candidates need the rest)
#: a verdict's words when the judge's own process, not the candidate's, ran out of GPU memory
OWN_MEMORY = (
    "the GPU ran out of memory in Kernel Lab's own process (it keeps the reference's results and lends the inputs), "
    "not in the candidate's: ask for fewer candidates a round (--candidates, the candidates setting) or declare smaller "
    "SHAPES"
)


@dataclass(frozen=True)
class Options:
    """What the judge reads of the settings: how many fresh input sets per shape, the tolerances (None: by dtype),
    and the seconds one candidate may take."""

    seeds: int = 3
    rtol: float | None = None
    atol: float | None = None
    timeout: float = 300.0

    @classmethod
    def of(cls, settings: Any) -> Options:
        """From a :class:`kernel_lab.settings.Settings`."""
        return cls(settings.seeds, settings.rtol, settings.atol, settings.verify_timeout)


@dataclass
class Expected:
    """The reference's results on one input set, and the inputs as made (to spot a candidate changing them)."""

    set: InputSet
    outputs: list[torch.Tensor]
    in_place: list[int]
    in_place_values: list[torch.Tensor]
    truth: list[torch.Tensor] | None
    metas: list[dict[str, Any]]
    input_bytes: int
    inputs: dict[int, torch.Tensor] = field(default_factory=dict)  # the tensor inputs as made, by position
    values: dict[int, Any] = field(default_factory=dict)  # the other inputs as made (JSON, see handover.encode)

    def handed(self) -> list[tuple[str, Any]]:
        """Each of ``run``'s arguments, as :func:`handover.pack` takes them."""
        n = len(self.inputs) + len(self.values)
        return [("tensor", self.inputs[i]) if i in self.inputs else ("value", self.values[i]) for i in range(n)]


def scratch(device: str | None) -> torch.device:
    """Where the parent compares results: the GPU the cells run on when there is one (outputs of hundreds
    of megabytes compare in milliseconds there, in seconds on the CPU), else the CPU."""
    import torch

    if device is None:
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(device if device.startswith("cuda") and torch.cuda.is_available() else "cpu")


def spare(device: torch.device) -> None:
    """Give the GPU memory this process's allocator keeps cached but unused back to the device: the candidates'
    processes share the GPU with the judge's (on the H200 the process that held a race's judge had 66 GiB "in use",
    PyTorch's cache counted, when it ran out beside five candidates)."""
    if device.type == "cuda":
        handover.empty_cache()


def own_memory(err: BaseException, where: str = "") -> str:
    """What a verdict says when the judge's own process ran out of the GPU's memory (``where``: while doing what),
    with the gist of PyTorch's message: its first four sentences say what it tried to allocate, what was free and
    what this process held, then it goes on about every other process."""
    text = str(err).splitlines()[0] if str(err) else type(err).__name__
    gist = ". ".join(text.split(". ")[:4])
    return f"{OWN_MEMORY} ({where + ': ' if where else ''}{gist})"


def on(device: torch.device, fn: Any, *tensors: torch.Tensor, more: tuple = ()) -> Any:
    """``fn(*tensors, *more)`` with the tensors moved to ``device``; on the CPU when the device's memory runs
    out (candidates' processes use the GPU too)."""
    import torch

    try:
        return fn(*(t.to(device) for t in tensors), *more)
    except torch.OutOfMemoryError:
        spare(device)
        return fn(*(t.cpu() for t in tensors), *more)


def survives(reply: dict[str, Any], tensors: list[Any], boxes: list[Any], expected: Expected, reference: Reference) -> bool:
    """Whether a knocked-out call's outputs (its own kernels doing nothing) are the reference's, within tolerance."""
    from kernel_lab.verify.compare import compare, tolerance, uses_tf32

    if "raised" in reply or reply.get("count") != len(expected.outputs):
        return False
    sent, mailed = iter(tensors), set(reply.get("mailed", []))
    got = [boxes[k] if k in mailed else next(sent, None) for k in range(len(expected.outputs))]
    tf32 = uses_tf32(reference.source)
    for g, want in zip(got, expected.outputs):
        limits = tolerance(want.dtype, tf32, reference.options.rtol, reference.options.atol)
        if g is None or on(reference.scratch, compare, g, want, more=limits)[0] is not None:
            return False
    return True


class Reference:
    """The reference cell's process, its input sets and its results (see the module docstring)."""

    def __init__(self, source: str, options: Options, device: str | None, turns: Turns) -> None:
        self.source, self.options, self.device, self.turns = source, options, device, turns
        self.worker: Worker | None = None
        self.expected: dict[int, Expected] = {}  # by input set id
        self.timing: dict[tuple, list[InputSet]] = {}  # the sets timed calls rotate through, by declared shape
        self.notes: list[Finding] = []
        self.broken: Verdict | None = None
        self.device_name = "cpu"
        self.params: list[str] = []  # run's arguments' names
        self.observed: Expected | None = None  # the input set whose launches are recorded
        self.launched: dict[str, Any] | None = None  # what one call launched there
        self.survives: bool | None = None  # whether its output there is right with its own kernels doing nothing
        self.made = threading.Event()  # the results are made (or cannot be)
        self.sized = threading.Event()  # what a candidate's judging costs is known: it fits its time, or broken says no
        self.call_ms: list[float] = []  # the reference's calls on the declared inputs, as they were made
        self._held = 0  # bytes of results kept on the GPU
        self._warmed = False
        self._observing = threading.Lock()

    @functools.cached_property
    def scratch(self) -> torch.device:
        """Where results are compared (torch is imported here on first use: the processes start first)."""
        return scratch(self.device)

    @property
    def deadline(self) -> float:
        """The user's own cell gets its own, longer time (a first CUDA build takes minutes)."""
        return time.monotonic() + max(self.options.timeout, REFERENCE_TIMEOUT)

    def load(self, deadline: float, *, warm: bool = False) -> dict[str, Any]:
        """Take a process (started ahead, or a new one: :mod:`kernel_lab.verify.workers`) and load the cell there
        (``warm``: then what recording its kernels needs)."""
        self.worker, loaded = self._loaded(deadline)
        if warm:
            self.warm(deadline)
        return loaded

    def _loaded(self, deadline: float) -> tuple[Worker, dict[str, Any]]:
        """A process with the cell loaded, and what loading it said."""
        worker = workers.take(workers.SANDBOX, "reference", self.device, max(self.options.timeout, REFERENCE_TIMEOUT))
        cell = worker.folder / "cell.py"
        cell.write_text(self.source)
        try:
            loaded, _ = worker.answer({"cmd": "load", "path": str(cell)}, deadline, "while loading the cell", located=True)
        finally:
            cell.unlink(missing_ok=True)  # candidates never find the reference's source beside theirs
        return worker, loaded

    def warm(self, deadline: float) -> None:
        """Have the process load the profiler (seconds of imports), once."""
        if not self._warmed and self.worker is not None:
            self._warmed = True
            self.worker.answer({"cmd": "warm"}, deadline, "while loading the profiler")

    def prepare(self, loaded: Callable[[], dict[str, Any]], deadline: float) -> None:
        """Once the cell is ``loaded`` (a call that waits for it, or loads it), plan the input sets and make each
        with its results, a turn on the GPU at a time (a caller's timings go between them:
        :class:`kernel_lab.verify.turns.Turns`); then load the profiler. When the process stops, :attr:`broken` says
        why."""
        try:
            self._make_all(loaded(), deadline)
            spare(self.scratch)  # the copies made on the way: the candidates' processes need that memory
            self.made.set()
            self.sized.set()
            self.warm(deadline)
        except Stopped as stop:
            self.stopped(stop)
        finally:
            self.made.set()
            self.sized.set()

    def _make_all(self, loaded: dict[str, Any], deadline: float) -> None:
        assert self.worker is not None
        if not loaded.get("make_inputs", True):
            raise Stopped("the reference defines no make_inputs() function: a cell needs make_inputs() and run(*inputs)")
        self.device_name, self.params = loaded["device_name"], loaded["params"]
        shapes = [tuple(s) for s in loaded["shapes"]]
        if len(shapes) == 1 and not loaded["sizes_known"]:
            self.notes.append(
                Finding(
                    "single_shape",
                    "The cell declares a single input shape (make_inputs takes no sizes and there is no SHAPES): only that"
                    " shape was checked; declare SHAPES or give make_inputs size parameters.",
                )
            )
        specs = plan(shapes, self.options.seeds, loaded["sizes_known"])
        for spec in specs:
            if not spec.layout:
                self._make(self.worker, spec, deadline)
            if len(self.call_ms) == self.options.seeds and not self.sized.is_set():
                self._size(specs)
            if self.broken is not None:
                return
        self._make_laid([s for s in specs if s.layout], deadline)

    def _size(self, specs: list[InputSet]) -> None:
        """Once the first declared shape's sets are made: on the CPU, refuse at once a cell whose candidates could not
        be judged in their time (:attr:`broken` says how small to make it), rather than time every one of them out."""
        self.sized.set()
        per_call = min(self.call_ms)
        shapes = len({s.shape for s in specs if s.declared})
        calls = 2 * sum(not s.timing for s in specs) + 2 + TIMED_CALLS * shapes * 2  # checks, whose work, both sides timed
        needed = calls * per_call / 1e3
        if self.device_name != "cpu" or needed <= self.options.timeout:
            return
        smaller = max(2, round(needed / (0.5 * self.options.timeout)))
        self.broken = Verdict(
            False,
            f"the reference takes {per_call / 1e3:.2f} s a call in Triton's CPU interpreter; judging one candidate needs"
            f" about {calls} calls, about {needed:.0f} s, over the {self.options.timeout:.0f} s a candidate may take"
            f" (verify_timeout): make make_inputs' sizes (or SHAPES) about {smaller}x smaller (the interpreter runs every"
            " program in Python: a few thousand elements, and blocks of 256 or more, run in milliseconds), or run on a GPU",
            failure="too_slow",
        )

    def _make(self, worker: Worker, spec: InputSet, deadline: float) -> None:
        """Have ``worker`` make one input set and the reference's results on it, and keep them (a turn on the GPU)."""
        with self.turns.step():
            worker.answer({"cmd": "make", "sets": [spec.to_json()]}, deadline, "while making the inputs")
            reply, tensors = worker.more(deadline, "while making the inputs")
            if "lent" in reply:  # on the GPU: results lent by CUDA IPC, copied here (the reference is the user's cell)
                tensors = [handover.take(lent) for lent in reply.pop("lent")]
            self._keep(spec, reply, tensors)

    def _make_laid(self, specs: list[InputSet], deadline: float) -> None:
        """The input sets laid out otherwise than contiguously, made by the cell in a process of its own: a reference
        that assumes contiguous inputs may read or write out of their bounds there, which must not stop its own."""
        if not specs:
            return
        probe = None
        try:
            probe, _ = self._loaded(deadline)
            for spec in specs:
                self._make(probe, spec, deadline)
        except Stopped as stop:
            said = " nor ".join(s.describe(shown=False) for s in specs)
            self.notes.append(
                Finding("skipped_inputs", f"Skipped {said}: {stop} (it may assume contiguous inputs and reach past them).")
            )
        finally:
            if probe is not None:
                ended([probe], wait=False)

    def stopped(self, stop: Stopped) -> None:
        """The process stopped: every verdict from now on says why."""
        self.broken = Verdict(False, f"{stop}: nothing can be judged against it", failure="broken_reference")

    def _keep(self, spec: InputSet, reply: dict[str, Any], tensors: list[Any]) -> None:
        """Keep the results for one input set, or skip the set (saying why), or give up."""
        where = f"on {spec.describe()}"
        if "error" in reply:
            if reply.get("kind") == "not_applicable":  # a layout that changes none of its inputs: nothing to try
                return
            if not spec.optional:
                self.broken = Verdict(
                    False, f"the reference {reply['error']} {where}: nothing can be judged against it", failure="broken_reference"
                )
            else:
                self.notes.append(Finding("skipped_inputs", f"Skipped {spec.describe()}: the reference {reply['error']} there."))
            return
        if not spec.optional and not spec.timing:
            self.call_ms.append(reply["call_ms"])
        n, in_place, made = len(reply["outputs"]), reply["in_place"], reply["inputs"]
        outputs, written = tensors[:n], tensors[n : n + len(in_place)]
        truth = tensors[n + len(in_place) : len(tensors) - len(made)] if reply["truth"] else None
        kept = dict(zip(made, tensors[len(tensors) - len(made) :]))  # the tensor inputs as made
        values = {int(i): v for i, v in reply["values"].items()}
        if spec.optional and not all(bool(t.isfinite().all()) for t in outputs if t.is_floating_point()):
            self.notes.append(
                Finding(
                    "skipped_inputs",
                    f"Skipped {spec.describe()}: the reference gives NaN or inf there (it is not defined on them).",
                )
            )
            return
        if not spec.optional and not spec.timing and self._constant(outputs, where):
            return
        if reply.get("truth_skipped") and not spec.optional and not any(n.kind == "truth_skipped" for n in self.notes):
            self.notes.append(
                Finding(
                    "truth_skipped",
                    "No more precise answer could be made to hold candidates to: the reference's "
                    f"{reply['truth_skipped']}; candidates were held to the output's tolerance alone.",
                )
            )
        # compared with every candidate's, and copied for each: moved where comparisons run once, not each time
        groups = ([], [], [], list(kept.values())) if spec.timing else (outputs, written, truth or [], list(kept.values()))
        moved = iter(self._resident([t for group in groups for t in group]))
        moved_groups = [[next(moved) for _ in group] for group in groups]
        if not spec.timing:
            outputs, written = moved_groups[0], moved_groups[1]
            truth = moved_groups[2] if truth is not None else None
        kept = dict(zip(kept, moved_groups[3]))
        expected = Expected(spec, outputs, in_place, written, truth, reply["outputs"], reply["input_bytes"], kept, values)
        if spec.timing:
            self.timing.setdefault(spec.shape, []).append(spec)
        self.expected[spec.id] = expected

    def _constant(self, outputs: list[torch.Tensor], where: str) -> bool:
        """Whether an output is (near) constant, which makes correctness unjudgeable (:attr:`broken` then says so)."""
        from kernel_lab.verify.compare import near_constant

        for i, t in enumerate(outputs):
            if t.numel() > 1 and on(self.scratch, near_constant, t):
                self.broken = Verdict(
                    False,
                    f"the reference's output {i} is (near) constant {where}: cannot judge correctness; use inputs that give"
                    " varied outputs",
                    failure="broken_reference",
                )
                return True
        return False

    def _resident(self, tensors: list[torch.Tensor]) -> list[torch.Tensor]:
        """``tensors`` moved to where results are compared, while the results kept on the GPU stay under
        :data:`RESIDENT_SHARE` of its memory; else (or when it runs out) kept on the CPU."""
        import torch

        size = sum(t.nbytes for t in tensors)
        if self.scratch.type == "cuda":
            total = torch.cuda.get_device_properties(self.scratch).total_memory
            if self._held + size > RESIDENT_SHARE * total:
                return [t.cpu() for t in tensors]
        try:
            moved = [t.to(self.scratch) for t in tensors]
        except torch.OutOfMemoryError:
            spare(self.scratch)
            return [t.cpu() for t in tensors]
        self._held += size
        return moved

    def checked(self) -> list[Expected]:
        """The input sets a candidate is checked on (not the timing sets)."""
        return [e for e in self.expected.values() if not e.set.timing]

    def observe(self, deadline: float, wait: Any = None) -> None:
        """Record what the reference launches, on its largest declared input set (once: only the names of kernels
        and operators are compared, so candidates may be checked meanwhile). ``wait``: a future to wait for first
        (the preparation, which loads the profiler)."""
        with self._observing:
            if wait is not None:
                wait.result()
            checked = self.checked()
            if self.broken is None and checked and self.launched is None:
                assert self.worker is not None
                self.observed = max(checked, key=lambda e: (not e.set.optional, e.input_bytes))
                request = {"cmd": "observe", "set_id": self.observed.set.id}
                try:
                    self.launched, _ = self.worker.answer(request, deadline, "while recording its kernels")
                    self.survives = self._survives(deadline)
                except Stopped as stop:
                    self.stopped(stop)

    def _survives(self, deadline: float) -> bool:
        """Whether the reference's own output is right with its own kernels doing nothing (a reference that computes
        with PyTorch: then a candidate's doing so is no fall-back)."""
        assert self.worker is not None and self.observed is not None
        request = {"cmd": "knockout", "set_id": self.observed.set.id}
        reply, tensors = self.worker.answer(request, deadline, "with its own kernels made to do nothing")
        return survives(reply, tensors, [], self.observed, self)

    def close(self) -> None:
        if self.worker is not None:
            ended([self.worker], wait=False)
            self.worker = None
