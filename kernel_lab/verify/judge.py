"""The judge: is a candidate version of a cell correct, and is it faster? Decided here, in the trusted parent.

The reference cell and each candidate run in processes of their own (:mod:`kernel_lab.verify.sandbox`)
that only hand back outputs, metadata and timings through private pipes; the inputs, the comparisons and
the verdict are made here, never in a process that ran candidate code. One :class:`Judge` holds the
reference's process for a session (its inputs and expected outputs are made once) and starts a fresh
process for every candidate, with a timeout; whatever happens comes back as a :class:`Verdict`.

What is checked (the README's judge section lists it, and what is not):

* correctness on input sets the candidate has never seen: fresh secret seeds, the declared shapes, odd
  shapes around them, large, small and negative values (:mod:`kernel_lab.verify.inputs`); outputs poisoned
  with NaN before every call; two calls per set; outputs against the reference's and against a float64
  "truth" (:mod:`kernel_lab.verify.compare`); inputs the reference leaves alone must stay unchanged;
* what the outputs are: not a view of an input, not one buffer reused across calls, the reference's layout;
* whose work it is: the GPU time spent in the candidate's own kernels (a fall-back to PyTorch or a library,
  a decoy kernel), the PyTorch operators it calls that the reference does not;
* timing on every declared shape, interleaved with the reference, caches flushed, every timed call on
  inputs varied in secret and its output checked; stray threads joined and side-stream work caught before
  a clock stops; the process's clock checked against the judge's own; bytes per second under the GPU's roof.

``warnings`` block a candidate until the user confirms it (a >10x speedup from changed code, a fall-back, timings
that cannot be confirmed, a slowdown on some shape); ``notes`` only inform.
"""

from __future__ import annotations

import functools
import importlib
import os
import re
import secrets
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from kernel_lab import fastbuild, hardware
from kernel_lab.cells import kernel_names
from kernel_lab.rewrite.launch import parameter_only
from kernel_lab.settings import Settings
from kernel_lab.verify import handover, workers
from kernel_lab.verify.inputs import InputSet, plan
from kernel_lab.verify.turns import Turns
from kernel_lab.verify.verdict import SUSPICIOUS_SPEEDUP, Timing, Verdict
from kernel_lab.verify.workers import Stopped, Worker, ended

if TYPE_CHECKING:
    import torch

TIME_BUDGET_S = 1.0  # timing of all shapes together, reference and candidate
REFERENCE_TIMEOUT = 600.0  # seconds the reference may take to load and make its results
CALLS_PER_BATCH = 5
MIN_SAMPLES, MAX_SAMPLES = 10, 200  # timed calls per side on the headline shape (half on the others), at least; at most
# per candidate (a slow reference makes fewer: reference_calls)
OUT_OF_MEMORY = "OutOfMemoryError"  # in a verdict's reason: the candidate ran out of the device's memory
FALLBACK_SHARE = 0.5  # own kernels' share of the GPU time under which a candidate is a fall-back
ROOF_MARGIN = 1.15  # bytes per second over this many times the DRAM peak cannot be real
SLOWER = 0.8  # a declared shape on which the candidate runs this fraction of the reference's speed, or less, blocks it
#: per call: under this, what a call costs a user is mostly its launch from the host, which the judge's timing
#: leaves out (a Triton launch from Python: 0.02-0.06 ms on the H100; a 4096-float add's kernel: 0.004 ms;
#: benchmarks/launch_hidden_h100/), so a slowdown of the kernels there is noted, not held against the candidate
HOST_BOUND_MS = 0.05
LIBRARY_OP = re.compile(
    r"aten::(mm|addmm|bmm|baddbmm|addbmm|matmul|linear|_scaled_mm|_int_mm|_?convolution|conv(?:\d|_transpose)\w*"
    r"|cudnn_convolution\w*|mkldnn_convolution|_scaled_dot_product\w+)$"
)
LIBRARY_KERNEL = re.compile(r"gemm|cublas|cutlass|cudnn|xmma|nvjet|convolve|conv[123]d|winograd", re.IGNORECASE)
#: aten operators that allocate, view or move data: any other is computation
DATA_OP = re.compile(
    r"aten::(empty\w*|zeros\w*|ones\w*|full\w*|new_\w+|arange|view\w*|reshape|_reshape_alias|_unsafe_view|as_strided\w*"
    r"|contiguous|clone|copy_|_to_copy|to|fill_|zero_|t|transpose\w*|permute|expand\w*|narrow|slice|select|unsqueeze\w*"
    r"|squeeze\w*|flatten|unflatten|detach\w*|alias|lift\w*|resize_|item|_local_scalar_dense|split\w*|chunk|unbind"
    r"|cat|stack|set_|result_type|numel|size|stride|dim|is_nonzero|record_stream|_has_compatible_shallow_copy_type)$"
)


T = TypeVar("T")
JudgeEvents = Callable[[int, str], None]  # (candidate index, state)


class Judging(Protocol):
    """What the optimize loop needs of a judge: a round's candidates judged against its reference."""

    def check_many(self, sources: list[str], on_event: JudgeEvents | None = None) -> list[Verdict]: ...


class Rejected(Exception):
    """The candidate is wrong; the message says how, in words."""


@dataclass
class Expected:
    """The reference's results on one input set, and fingerprints of the inputs to spot changes."""

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


def on(device: torch.device, fn: Callable[..., Any], *tensors: torch.Tensor, more: tuple = ()) -> Any:
    """``fn(*tensors, *more)`` with the tensors moved to ``device``; on the CPU when the device's memory runs
    out (candidates' processes use the GPU too)."""
    import torch

    try:
        return fn(*(t.to(device) for t in tensors), *more)
    except torch.OutOfMemoryError:
        torch.cuda.empty_cache()
        return fn(*(t.cpu() for t in tensors), *more)


RESIDENT_SHARE = 0.25  # of the GPU's memory, at most, for the reference's results kept there (candidates need the rest)


def same_bits(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Whether two tensors hold the same bytes."""
    import torch

    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    return bool(torch.equal(*(t.contiguous().reshape(-1).view(torch.uint8) for t in (a, b))))


def scratch(device: str | None) -> torch.device:
    """Where the parent compares results: the GPU the cells run on when there is one (outputs of hundreds
    of megabytes compare in milliseconds there, in seconds on the CPU), else the CPU."""
    import torch

    if device is None:
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(device if device.startswith("cuda") and torch.cuda.is_available() else "cpu")


def _in_background(work: Callable[[float], T], deadline: float) -> Future[T]:
    """``work(deadline)`` on a thread of its own; its result (or exception) in the future returned."""
    pool = ThreadPoolExecutor(1)
    future = pool.submit(work, deadline)
    pool.shutdown(wait=False)
    return future


def import_torch_soon() -> None:
    """Import torch in this process in a background thread, now that nothing waits on this process: the judge needs
    it here on its first comparison, and importing it holds the interpreter for seconds, during which the screen's
    and the judge's threads here stall (3.5 s of round 1 on the H100: benchmarks/race_h100_memo)."""
    if "torch" not in sys.modules:
        threading.Thread(target=importlib.import_module, args=("torch",), name="import torch", daemon=True).start()


def parallel() -> int:
    """How many candidates a judge checks at once (a process each: Python, torch and compilers work in parallel)."""
    return max(1, min(4, (os.cpu_count() or 2) // 2))


class Judge:
    """Judges candidates against one reference cell; holds the reference's process and its results.

    Use as a context manager (or call :meth:`close`); :meth:`check` never raises, it returns a Verdict.
    """

    def __init__(
        self, reference_source: str, settings: Settings | None = None, device: str | None = None, *, time: bool = True
    ) -> None:
        self.settings = settings or Settings()
        self.device = device
        self.time = time
        self.reference_source = reference_source
        self._reference: Worker | None = None
        self._expected: dict[int, Expected] = {}
        self._timing: dict[tuple, list[InputSet]] = {}
        self._notes: list[str] = []
        self._broken: Verdict | None = None
        self._observed: Expected | None = None  # the input set whose launches are recorded
        self._observed_reference: dict[str, Any] | None = None
        self._device_name = "cpu"
        self._lending = handover.Lending()  # memory lent to candidates (inputs, buffers for outputs)
        self._held = 0  # bytes of the reference's results kept there
        self._params: list[str] = []
        self._lock = threading.Lock()
        self._widest = 1  # the most candidates judged in one round so far
        self._spare: list[Worker] = []  # candidates' processes started for the next round
        self._loading: Future[dict[str, Any]] | None = None  # the reference loading, from start()
        self._preparing: Future[None] | None = None  # its inputs and results being made, from start(prepare=True)
        self._made = threading.Event()  # they are made (or cannot be)
        self._turns = Turns()  # the GPU: a caller's timings (see quiet) go before the reference's preparation
        self._ending: threading.Thread | None = None  # the last round's processes being waited for
        self._warmed = False  # the reference's process has loaded the profiler
        self._observing = threading.Lock()  # one record of the reference's kernels, asked by the first trial there
        self._header: subprocess.Popen | None = None  # precompiling torch's header for CUDA candidates
        self._prepared = False  # the reference's results are made (or being made, or failed: see _broken)
        self.parallel = parallel()  # candidates checked at once

    @functools.cached_property
    def _scratch(self) -> torch.device:
        """Where results are compared (torch is imported here on first use: the processes start first)."""
        return scratch(self.device)

    def __enter__(self) -> Judge:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._round_ended()
        if self._header is not None:
            self._header.poll()  # left to finish: the next judge of a CUDA cell uses the header too
        if self.settings.optimize_ahead:  # never given a cell: the next judge's
            workers.keep(self._spare)
        else:
            ended(self._spare, wait=False)
        self._spare = []
        self._lending.close()
        pending = self._preparing or self._loading
        self._loading = self._preparing = None
        if pending is not None:  # still loading or preparing, maybe: the reference's process ends once it is done
            pending.add_done_callback(lambda _: self._close_reference())
        else:
            self._close_reference()

    def _close_reference(self) -> None:
        if self._reference is not None:
            ended([self._reference], wait=False)
            self._reference = None

    # the reference, once -------------------------------------------------------------------------------

    def start(self, *, prepare: bool = False) -> None:
        """Start the reference's process and load its cell, and the first candidates' processes, in the background:
        Python, torch, CUDA and the cell's imports load while the caller does other work (profiles, screens).
        ``prepare``: then make the input sets and the reference's results on the GPU too, an input set at a time
        (a caller's timings go between them: see :meth:`quiet`); else nothing runs on the GPU until the first
        :meth:`check`."""
        with self._lock:
            deadline = time.monotonic() + max(self.settings.verify_timeout, REFERENCE_TIMEOUT)
            if self._loading is None and not self._prepared:
                # with nothing to prepare yet, the reference loads the profiler at once (the caller's own work,
                # a profile, hides it); else after its results are made (see _prepare)
                self._loading = _in_background(functools.partial(self._load, warm=not prepare), deadline)
                self._spare += [self._spawn() for _ in range(self.parallel)]
                if "<<<" in self.reference_source and self._header is None and self._scratch.type == "cuda":
                    self._header = fastbuild.prepare_in_background()  # candidates' builds need it (~40 s, once)
            if prepare and not self._prepared:
                self._prepared = True
                self._preparing = _in_background(self._prepare_or_break, deadline)

    def wait_prepared(self) -> None:
        """Return once the reference's inputs and results that :meth:`start` began making are there (at once
        when it was not asked to)."""
        if self._preparing is not None:
            self._made.wait()

    @contextmanager
    def quiet(self) -> Iterator[None]:
        """While held, nothing of the judge's runs on the GPU: the last round's processes are gone, and the
        reference's preparation (see :meth:`start`) waits between input sets. For a caller's timings (the screen's):
        they wait for the input set under way, not for the whole preparation."""
        self._round_ended()
        with self._turns.timing():
            yield

    def _load(self, deadline: float, *, warm: bool = False) -> dict[str, Any]:
        """Start the reference's process (or take one started ahead: :mod:`kernel_lab.verify.workers`) and load its
        cell there (``warm``: then what recording its kernels needs)."""
        timeout = max(self.settings.verify_timeout, REFERENCE_TIMEOUT)
        self._reference = workers.take(workers.SANDBOX, "reference", self.device, timeout)
        cell = self._reference.folder / "cell.py"
        cell.write_text(self.reference_source)
        loaded, _ = self._reference.answer(
            {"cmd": "load", "path": str(cell)},
            deadline,
            "while loading the cell",
            located=True,
        )
        cell.unlink()  # candidates never find the reference's source beside theirs
        if warm:
            self._warm(deadline)
        return loaded

    def _warm(self, deadline: float) -> None:
        """Have the reference's process load the profiler (seconds of imports), once."""
        if not self._warmed:
            self._warmed = True
            assert self._reference is not None
            self._reference.answer({"cmd": "warm"}, deadline, "while loading the profiler")

    def _prepare_or_break(self, deadline: float) -> None:
        """:meth:`_prepare`; when the reference's process stops, every verdict says why."""
        try:
            self._prepare(deadline)
        except Stopped as stop:
            self._break(stop)
        finally:
            self._made.set()

    def _prepare(self, deadline: float) -> None:
        """Load the reference (or wait for :meth:`start`'s loading), plan the input sets, make them and the
        expected results, a set at a time (then :meth:`wait_prepared` returns), then load in the reference's process what
        recording its kernels needs (the profiler: seconds of imports, on the CPU alone)."""
        loading, self._loading = self._loading, None
        loaded = loading.result() if loading is not None else self._load(deadline)
        assert self._reference is not None
        self._device_name = loaded["device_name"]
        self._params = loaded["params"]
        shapes = [tuple(s) for s in loaded["shapes"]]
        if len(shapes) == 1 and not loaded["sizes_known"]:
            self._notes.append(
                "The cell declares a single input shape (make_inputs takes no sizes and there is no SHAPES): "
                "only that shape was checked; declare SHAPES or give make_inputs size parameters."
            )
        sets = plan(shapes, self.settings.seeds, loaded["sizes_known"])
        where = "while making the inputs"
        for spec in sets:  # one at a time, each a turn on the GPU that waits while the caller times (see quiet)
            with self._turns.step():
                self._reference.answer({"cmd": "make", "sets": [spec.to_json()]}, deadline, where)
                reply, tensors = self._reference.more(deadline, where)
                if "lent" in reply:  # on the GPU: results lent by CUDA IPC, copied here (the reference is the user's cell)
                    tensors = [handover.take(lent) for lent in reply.pop("lent")]
                self._keep(spec, reply, tensors)
        self._made.set()
        self._warm(deadline)

    def _observe(self, deadline: float) -> None:
        """Record what the reference launches, on its largest declared input set (once, when the first candidate's
        checks are over: only the names of kernels and operators are compared, so candidates may be checked
        meanwhile). Waits for the reference's process to have loaded the profiler (see :meth:`_prepare`)."""
        with self._observing:
            if self._preparing is not None:
                self._preparing.result()
            checked = [e for e in self._expected.values() if not e.set.timing]
            if self._broken is None and checked and self._observed_reference is None:
                assert self._reference is not None
                self._observed = max(checked, key=lambda e: (e.set.declared and not e.set.variant, e.input_bytes))
                request = {"cmd": "observe", "set_id": self._observed.set.id}
                try:
                    self._observed_reference, _ = self._reference.answer(request, deadline, "while recording its kernels")
                except Stopped as stop:
                    self._break(stop)

    def _break(self, stop: Stopped) -> None:
        """The reference's process stopped: every verdict from now on says why."""
        self._broken = Verdict(False, f"{stop}: nothing can be judged against it")

    def _keep(self, spec: InputSet, reply: dict[str, Any], tensors: list[Any]) -> None:
        """Keep the reference's results for one input set, or skip the set (saying why), or give up."""

        where = f"on {spec.describe()}"
        if "error" in reply:
            if spec.declared and not spec.variant:
                self._broken = Verdict(False, f"the reference {reply['error']} {where}: nothing can be judged against it")
            else:
                self._notes.append(f"Skipped {spec.describe()}: the reference {reply['error']} there.")
            return
        n, in_place, made = len(reply["outputs"]), reply["in_place"], reply["inputs"]
        outputs, written = tensors[:n], tensors[n : n + len(in_place)]
        truth = tensors[n + len(in_place) : len(tensors) - len(made)] if reply["truth"] else None
        kept = dict(zip(made, tensors[len(tensors) - len(made) :]))  # the tensor inputs as made
        values = {int(i): v for i, v in reply["values"].items()}
        if spec.variant and not all(bool(t.isfinite().all()) for t in outputs if t.is_floating_point()):
            self._notes.append(f"Skipped {spec.describe()}: the reference gives NaN or inf there (it is not defined on them).")
            return
        if spec.declared and not spec.variant and not spec.timing:
            from kernel_lab.verify.compare import near_constant

            for i, t in enumerate(outputs):
                if t.numel() > 1 and on(self._scratch, near_constant, t):
                    self._broken = Verdict(
                        False,
                        f"the reference's output {i} is (near) constant {where}: cannot judge "
                        "correctness; use inputs that give varied outputs",
                    )
                    return
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
            self._timing.setdefault(spec.shape, []).append(spec)
        self._expected[spec.id] = expected

    def _resident(self, tensors: list[torch.Tensor]) -> list[torch.Tensor]:
        """``tensors`` moved to where results are compared, while the reference's results kept on the GPU stay
        under :data:`RESIDENT_SHARE` of its memory; else (or when it runs out) kept on the CPU."""
        import torch

        size = sum(t.nbytes for t in tensors)
        if self._scratch.type == "cuda":
            total = torch.cuda.get_device_properties(self._scratch).total_memory
            if self._held + size > RESIDENT_SHARE * total:
                return [t.cpu() for t in tensors]
        try:
            moved = [t.to(self._scratch) for t in tensors]
        except torch.OutOfMemoryError:
            torch.cuda.empty_cache()
            return [t.cpu() for t in tensors]
        self._held += size
        return moved

    # candidates ----------------------------------------------------------------------------------------

    def _spawn(self) -> Worker:
        """A candidate process, started before its cell is known (Python, torch and CUDA load meanwhile), or one
        started ahead that has loaded nothing (:mod:`kernel_lab.verify.workers`)."""
        return workers.take(workers.SANDBOX, "candidate", self.device, self.settings.verify_timeout)

    def _started(self) -> Worker:
        """A started candidate process: the spare started earlier, else a new one."""
        return self._spare.pop(0) if self._spare else self._spawn()

    def check(self, candidate_source: str) -> Verdict:
        """Judge one candidate (a whole cell); never raises."""
        return self.check_many([candidate_source])[0]

    def check_many(self, sources: list[str], on_event: JudgeEvents | None = None) -> list[Verdict]:
        """Judge candidates of the reference (one round of a session); never raises.

        Their correctness is checked in parallel, a process each (Python, torch and the compilers of one
        candidate work while another is checked; one that ran out of memory beside others is checked again alone:
        :meth:`_crowded`); then the right ones are timed, in turns with the reference.
        ``on_event(index, state)`` hears each candidate's progress: "checking", "timing", "done".
        """
        say = on_event or (lambda index, state: None)
        self._round_ended()
        with self._lock:
            # the reference is the user's own cell: it gets its own, longer time (a first CUDA build takes minutes)
            deadline = time.monotonic() + max(self.settings.verify_timeout, REFERENCE_TIMEOUT)
            # each candidate's cell loads (imports, builds) in its process from now on, while the reference prepares
            trials = [_Trial(self, self._started(), source) for source in sources]
            # the next round's processes start now, while these are judged: as many as the widest round so far
            self._widest = max(self._widest, len(sources))
            self._spare += [self._spawn() for _ in range(self._widest - len(self._spare))]
            if not self._prepared and self._broken is None:
                self._prepared = True
                self._prepare_or_break(deadline)
            # the inputs and expected results; the reference's process may still be loading the profiler, which
            # only the record of its kernels needs (after the first candidate's checks: see _observe)
            self._made.wait()
            if self._broken is not None:
                ended((trial.candidate for trial in trials), wait=False)
                return [self._broken] * len(sources)
            for trial in trials:  # a candidate's time counts from now: its loading overlapped the reference's
                trial.deadline = time.monotonic() + self.settings.verify_timeout

            def correct(index: int) -> Verdict | None:
                say(index, "checking")
                try:
                    trials[index].check(deadline)
                    return None
                except (Stopped, Rejected) as stop:
                    trials[index].candidate.close()
                    return trials[index].verdict(False, str(stop))

            with ThreadPoolExecutor(max_workers=max(1, min(len(trials), self.parallel))) as pool:
                verdicts: list[Verdict | None] = list(pool.map(correct, range(len(trials))))
            for index in self._crowded(verdicts):  # checked again alone, in a fresh process (its time counts from now)
                trials[index] = _Trial(self, self._started(), sources[index])
                verdicts[index] = correct(index)
            if self._broken is not None:  # the reference stopped while its kernels were recorded
                ended((trial.candidate for trial in trials), wait=False)
                return [self._broken] * len(sources)
            right = [index for index, verdict in enumerate(verdicts) if verdict is None]
            for index in right:
                say(index, "timing")
            timed = self._time([trials[index] for index in right]) if self.time else [() for _ in right]
            for index, timing in zip(right, timed):
                trial = trials[index]
                verdicts[index] = (
                    trial.verdict(False, str(timing)) if isinstance(timing, Exception) else trial.verdict(True, "ok", timing)
                )
            for index, trial in enumerate(trials):
                trial.candidate.close()
                say(index, "done")
            # the verdicts are in: the processes are waited for meanwhile (a few tenths of a second with CUDA
            # contexts), and before the next round or a caller's timings (see quiet)
            self._ending = threading.Thread(target=self._end, args=([trial.candidate for trial in trials],), daemon=True)
            self._ending.start()
            return [v for v in verdicts if v is not None]

    def _end(self, processes: list[Worker]) -> None:
        """Wait for a round's processes to end, then free what was handed over to them by CUDA IPC."""
        ended(processes)
        if self._scratch.type == "cuda":
            import torch

            torch.cuda.ipc_collect()  # the copies handed over and let go

    def _round_ended(self) -> None:
        """Return once the last round's processes are gone."""
        if self._ending is not None:
            self._ending.join()

    def _crowded(self, verdicts: list[Verdict | None]) -> list[int]:
        """The candidates that ran out of memory while others were checked beside them (the device's memory is
        shared by every process of a round, and by this one): each gets its checks again, alone, so that running
        out is held against a candidate only when it does so by itself. This process's spare memory goes first."""
        crowded = [i for i, v in enumerate(verdicts) if v is not None and OUT_OF_MEMORY in v.reason]
        if self.parallel < 2 or len(verdicts) < 2 or not crowded:
            return []
        if self._scratch.type == "cuda":
            import torch

            torch.cuda.empty_cache()
        return crowded

    # timing --------------------------------------------------------------------------------------------

    def _time(self, trials: list[_Trial]) -> list[tuple[Timing, ...] | Stopped | Rejected]:
        """Each candidate's timings (or why it failed while timed), side by side in batches that the GPU's
        memory holds: a batch's processes end before the next one is timed."""
        at_once = self._timed_at_once(len(trials))
        timed: list[tuple[Timing, ...] | Stopped | Rejected] = []
        for k in range(0, len(trials), at_once):
            batch = trials[k : k + at_once]
            timed += self._time_together(batch)
            if at_once < len(trials):
                ended(trial.candidate for trial in batch)
        return timed

    def _timed_at_once(self, n: int) -> int:
        """How many of ``n`` candidates to time side by side: on a GPU, as many as its free memory holds
        (each keeps copies of the largest timing set, its outputs and a cache flush); on the CPU, all."""
        if self._scratch.type != "cuda" or n <= 1:
            return max(n, 1)
        import torch

        largest = max((self._expected[s.id].input_bytes for sets in self._timing.values() for s in sets), default=0)
        free, _ = torch.cuda.mem_get_info(self._scratch)
        return max(1, min(n, free // (6 * largest + (1 << 30))))

    def _time_together(self, trials: list[_Trial]) -> list[tuple[Timing, ...] | Stopped | Rejected]:
        """Every declared shape timed (the largest first), the reference and each candidate in turn, in a new
        order every round; one series of the reference's times serves every candidate of the round. Each
        candidate's timings, or why it failed while timed."""
        assert self._reference is not None
        groups = sorted(self._timing.items(), key=lambda item: -max(self._expected[s.id].input_bytes for s in item[1]))
        # as long as each candidate timed alone with the reference (half the budget each side), shared
        budget = TIME_BUDGET_S * (len(trials) + 1) / 2 / max(len(groups), 1)
        failed: dict[int, Stopped | Rejected] = {}
        shapes: dict[int, list[Timing]] = {i: [] for i in range(len(trials))}
        ref = -1  # the reference, among the candidates by index
        timing = [s.id for _, sets in groups for s in sets]  # all a candidate still needs: it lets go of the rest
        for rank, (shape, sets) in enumerate(groups):
            live = [i for i in range(len(trials)) if i not in failed]
            if not live:
                break
            ids = [s.id for s in sets]
            want = MIN_SAMPLES if rank == 0 else MIN_SAMPLES // 2
            samples: dict[int, list[float]] = {i: [] for i in [ref, *live]}
            walls: dict[int, list[float]] = {i: [] for i in [ref, *live]}
            started, round_, ref_calls = time.monotonic(), 0, CALLS_PER_BATCH
            where = f"while being timed on shape {shape}"
            while live:
                request = {
                    "cmd": "time",
                    "set_ids": ids,
                    "calls": CALLS_PER_BATCH,
                    "secret": int.from_bytes(os.urandom(4), "little"),
                }
                first = secrets.randbelow(CALLS_PER_BATCH - ref_calls + 1)  # never sent to a candidate
                order = [ref, *live]
                order = order[round_ % len(order) :] + order[: round_ % len(order)]
                prints: dict[int, Any] = {}
                for who in order:
                    t0 = time.perf_counter()
                    try:
                        if who == ref:
                            asked = {**request, "calls": ref_calls, "first": first}
                            reply, (prints[who],) = self._reference.answer(asked, trials[0].deadline, where)
                        else:
                            reply, (prints[who],) = trials[who]._ask({**request, "keep": timing}, ids, where)
                    except Stopped as stop:
                        failed |= dict.fromkeys(live if who == ref else [who], stop)
                        if who == ref:
                            break
                        continue
                    samples[who] += reply["events_ms"]
                    walls[who] += reply["walls_ms"]
                    if who != ref:
                        trials[who].timed(reply, (time.perf_counter() - t0) * 1e3)
                for i in [i for i in live if i in prints and ref in prints]:
                    try:
                        trials[i]._fingerprints(prints[i], prints[ref], shape, first)
                    except Rejected as wrong:
                        failed[i] = wrong
                live = [i for i in live if i not in failed]
                round_ += 1
                ref_calls = reference_calls(samples[ref], [samples[i] for i in live])
                n = min((len(samples[i]) for i in live), default=0)
                if min(n, len(samples[ref])) >= want and (n >= MAX_SAMPLES or time.monotonic() - started > budget):
                    break
            for i in live:
                shapes[i].append(Timing.from_samples(samples[ref], samples[i], shape))
                on_gpu = self._device_name != "cpu"
                hidden = _hidden_work(samples[i], walls[i], samples[ref], walls[ref]) if on_gpu else None
                if hidden and hidden not in trials[i].warnings:
                    trials[i].warnings.append(hidden)
        out: list[tuple[Timing, ...] | Stopped | Rejected] = []
        for i, trial in enumerate(trials):
            if i in failed:
                out.append(failed[i])
                continue
            trial.clock()
            if shapes[i] and (roof := trial._above_roof(groups[0][1], shapes[i][0])):
                trial.warnings.append(roof)
            out.append(tuple(shapes[i]))
        return out


class _Trial:
    """One candidate's judgement (the steps of :meth:`Judge.check`)."""

    def __init__(self, judge: Judge, candidate: Worker, source: str) -> None:
        """Write the cell in the candidate's process's folder and have it start loading (its answer is read by :meth:`check`)."""
        self.judge, self.candidate, self.source = judge, candidate, source
        self.path = candidate.folder / "cell.py"
        self.deadline = time.monotonic() + judge.settings.verify_timeout
        self.warnings: list[str] = []
        self.clocks: list[str | None] = []  # per timed batch: what the judge's clock does not bear out, or None
        self.errors: tuple[float, float] | None = None
        self.checks = 0
        self.handed: set[int] = set()  # the input sets this candidate has its copies of
        self.path.write_text(source)
        self.unsent: Stopped | None = None
        try:
            candidate.send({"cmd": "load", "path": str(self.path)}, "while loading the cell")
        except Stopped as stop:
            self.unsent = stop

    def check(self, reference_deadline: float) -> None:
        """Load the cell and check it on every input set, then record its kernels beside the reference's (recorded
        now if no candidate did yet, by ``reference_deadline``); Rejected or Stopped, saying why, unless it is right."""
        j = self.judge
        if self.unsent is not None:
            raise self.unsent
        self.candidate.answered(self.deadline, "while loading the cell", located=True)
        checked = [e for e in j._expected.values() if not e.set.timing]
        for k, expected in enumerate(checked, 1):
            self._check(expected, f"on input set {k} of {len(checked)} ({expected.set.describe()})")
        j._observe(reference_deadline)
        if j._observed_reference is not None:  # else the reference stopped: every verdict says so
            self.warnings += self._whose_work()

    def verdict(self, correct: bool, reason: str, shapes: tuple[Timing, ...] = ()) -> Verdict:
        """The verdict, with the warnings that follow from the timings (the headline: the largest shape)."""
        headline = shapes[0] if shapes else None
        warnings = list(self.warnings)
        # the same kernels' code with other launch parameters, right on fresh inputs and shapes, does all the work
        # (the checks and the work's records above still hold it to that): a large speedup is then the point
        if (
            headline is not None
            and headline.speedup > SUSPICIOUS_SPEEDUP
            and not parameter_only(self.judge.reference_source, self.source)
        ):
            warnings.append(
                f"The candidate is {headline.speedup:.1f}× faster than the reference: a speedup over "
                f"{SUSPICIOUS_SPEEDUP:g}× deserves a second look (does it really do all the work?)."
            )
        notes = list(self.judge._notes)
        warning, note = slower_shapes(shapes)
        warnings += [warning] if warning else []
        notes += [note] if note else []
        max_abs, max_rel = self.errors or (None, None)
        return Verdict(
            correct,
            reason,
            tuple(warnings) if correct else (),
            max_abs,
            max_rel,
            self.checks,
            headline,
            shapes,
            tuple(notes),
        )

    # correctness ---------------------------------------------------------------------------------------

    def _check(self, expected: Expected, where: str) -> None:
        """Two calls of the candidate on one input set; Rejected, saying what is wrong, unless both are right."""
        from kernel_lab.verify.compare import against_truth, compare, tolerance, uses_tf32

        reply, tensors, boxes = self._checked(expected, where)
        self.checks += 1
        first, second, inputs_after = self._unpack(reply, tensors, expected, boxes)
        del boxes  # copied out: back to the lending pool before the comparisons
        settings = self.judge.settings
        tf32 = uses_tf32(self.judge.reference_source)
        calls = (
            ("first call", first, reply["first"], inputs_after[0]),
            ("second call", second, reply["second"], inputs_after[1]),
        )
        n = len(first)
        for call, outputs, metas, used in calls:
            here = f"{where}; {call}"
            for i, after in used.items():
                if i not in expected.in_place and not on(self.judge._scratch, same_bits, after, expected.inputs[i]):
                    raise Rejected(
                        f"the candidate changed its input {self._name(i)}, which the reference leaves unchanged ({here}): "
                        "write results to new tensors"
                    )
            got = list(outputs) + [used.get(i, expected.inputs.get(i)) for i in expected.in_place]
            want = expected.outputs + expected.in_place_values
            if len(outputs) != len(expected.outputs):
                raise Rejected(
                    f"the candidate returned {len(outputs)} outputs but the reference {len(expected.outputs)} ({here})"
                )
            for k, (g, w) in enumerate(zip(got, want)):
                label = (
                    ("output" if n == 1 else f"output {k}")
                    if k < n
                    else f"input {self._name(expected.in_place[k - n])} (written in place)"
                )
                limits = tolerance(w.dtype, tf32, settings.rtol, settings.atol)
                problem, errors = on(self.judge._scratch, compare, g, w, more=limits)
                if errors is not None:
                    worst = self.errors or (0.0, 0.0)
                    self.errors = (max(errors[0], worst[0]), max(errors[1], worst[1]))
                if problem:
                    raise Rejected(f"the candidate's {label} {problem} ({here})")
                if expected.truth is not None and k < len(expected.truth) and settings.rtol is None:
                    worse = on(self.judge._scratch, against_truth, g, w, expected.truth[k])
                    if worse:
                        raise Rejected(f"the candidate's {label} {worse} ({here})")
            self._layout(metas, expected, here)
        reused = [
            k
            for k, (a, b) in enumerate(zip(reply["first"], reply["second"]))
            if a["storage"] == b["storage"] and a["storage"][1] > a["storage"][0]
        ]
        if reused and not any(expected.metas[k]["aliases_input"] for k in reused):
            raise Rejected(
                f"the candidate returns the same buffer from every call ({where}): a second call overwrites the "
                "first call's result; allocate each output anew"
            )

    def _name(self, i: int) -> str:
        """The name of ``run``'s argument ``i``."""
        return self.judge._params[i] if i < len(self.judge._params) else f"argument {i + 1}"

    @staticmethod
    def _unpack(
        reply: dict[str, Any], tensors: list[Any], expected: Expected, boxes: list[torch.Tensor]
    ) -> tuple[list[Any], list[Any], tuple[dict[int, Any], dict[int, Any]]]:
        """(first outputs, second outputs, inputs each call wrote) from a check's answer: a first output the
        candidate wrote into the buffer lent for it is copied out of it (the candidate can still write there);
        a second output that was not sent repeats the first's bits; an input not listed as written is the set
        as made."""
        try:
            n = len(reply["first"])
            repeated, written = set(reply["repeated"]), [list(call) for call in reply["written"]]
            mailed = set(reply.get("mailed", []))
            in_form = len(reply["second"]) == n and repeated <= set(range(n)) and len(written) == 2
            in_form = in_form and mailed <= set(range(min(n, len(boxes))))
            in_form = in_form and all(i in expected.inputs for call in written for i in call)
        except (KeyError, TypeError, ValueError):
            in_form = False
        if not in_form:
            raise Rejected("the candidate's process answered a check out of form (was its harness changed?)")
        sent = iter(tensors)
        first = [boxes[k].clone() if k in mailed else next(sent, None) for k in range(n)]
        second = [first[k] if k in repeated else next(sent, None) for k in range(n)]
        after = tuple({i: next(sent, None) for i in call} for call in written)
        if any(t is None for t in first + second) or any(t is None for call in after for t in call.values()):
            raise Rejected("the candidate's process sent fewer tensors than its answer lists (was its harness changed?)")
        return first, second, (after[0], after[1])

    def _checked(self, expected: Expected, where: str) -> tuple[dict[str, Any], list[Any], list[torch.Tensor]]:
        """The candidate's answer on one input set, and the buffers lent for its outputs (on a GPU: one per
        output of the reference that lies there)."""
        scratch = self.judge._scratch
        boxes = []
        if scratch.type == "cuda" and all(m["device"] == "cuda" for m in expected.metas):
            boxes = [self.judge._lending.mailbox(m["shape"], m["dtype"], scratch) for m in expected.metas]
        request: dict[str, Any] = {"cmd": "check", "set_id": expected.set.id}
        if boxes:
            request["into"] = [handover.share(b) for b in boxes]
        reply, tensors = self._ask(request, [expected.set.id], where)
        return reply, tensors, boxes

    def _ask(self, request: dict[str, Any], sets: list[int], where: str) -> tuple[dict[str, Any], list[Any]]:
        """Ask the candidate, handing it its own copy of each of ``sets`` it does not have yet."""
        handed: dict[int, list[Any]] = {}
        carried: list[Any] = []
        kept: list[Any] = []  # the copies handed over by CUDA IPC live until the candidate has taken them
        for i in sets:
            if i not in self.handed:
                said, more, copies = handover.pack(self.judge._expected[i].handed(), self.judge._scratch, self.judge._lending)
                handed[i] = [{"tensor": item["tensor"] + len(carried)} if "tensor" in item else item for item in said]
                carried += more
                kept += copies
        if handed:
            request = {**request, "handed": handed}
        answer = self.candidate.answer(request, self.deadline, where, tensors=carried)
        self.handed |= set(handed)
        del kept
        return answer

    @staticmethod
    def _layout(metas: list[dict[str, Any]], expected: Expected, where: str) -> None:
        """Rejected when an output is a view of an input, or laid out unlike the reference's."""
        for k, (got, want) in enumerate(zip(metas, expected.metas)):
            label = "output" if len(expected.metas) == 1 else f"output {k}"
            if got["aliases_input"] and not want["aliases_input"]:
                raise Rejected(
                    f"the candidate's {label} shares memory with its input {got['aliases_input'][0] + 1} (a view such "
                    f"as x.t(), not a new tensor) where the reference returns a tensor of its own ({where})"
                )
            if got["device"] != want["device"]:
                raise Rejected(
                    f"the candidate's {label} is on {got['device']} but the reference's is on {want['device']} ({where})"
                )
            if got["contiguous"] != want["contiguous"] or (not want["contiguous"] and got["strides"] != want["strides"]):
                raise Rejected(
                    f"the candidate's {label} has strides {tuple(got['strides'])} where the reference's has "
                    f"{tuple(want['strides'])} ({where}): return the layout the reference returns"
                )

    # whose work ----------------------------------------------------------------------------------------

    def _whose_work(self) -> list[str]:
        """Warnings about where the candidate's work happens (its own kernels, or not), against the reference."""
        j = self.judge
        assert j._observed is not None and j._observed_reference is not None
        request = {"cmd": "observe", "set_id": j._observed.set.id}
        cand, _ = self._ask(request, [j._observed.set.id], "while recording its kernels")
        ref = j._observed_reference
        names = kernel_names(self.source)
        own = re.compile(rf"(?:void )?(?:\w+::)*(?:{'|'.join(map(re.escape, names))})\b") if names else None
        kernels: dict[str, float] = cand["kernels"]
        total = sum(kernels.values())
        mine = sum(t for k, t in kernels.items() if own and own.match(k))
        warnings = []
        if not cand["own_launches"] and not mine:
            warnings.append("The candidate launched none of its own kernels: it may fall back to PyTorch.")
        elif total > 0 and mine / total < FALLBACK_SHARE:
            others = sorted((k for k in kernels if not (own and own.match(k))), key=lambda k: -kernels[k])
            warnings.append(
                f"Only {mine / total:.0%} of the candidate's GPU time is spent in its own kernels; the rest in "
                f"{', '.join(o[:50] for o in others[:3])}: a fall-back, whatever else it launches."
            )
        elif not total and not cand["outputs_passed_to_own_kernels"]:
            warnings.append(
                "The candidate's result was not produced by its own kernels (its output never went to one of "
                "them): a fall-back, whatever else it launches."
            )
        compute = sorted(op for op in set(cand["ops"]) - set(ref["ops"]) if not DATA_OP.match(op) and not LIBRARY_OP.match(op))
        if compute:
            warnings.append(
                f"The candidate computes with PyTorch operators the reference does not use ({', '.join(compute[:4])}): "
                "its result or its speed may come from PyTorch, not from its own kernels."
            )

        def library(seen: dict[str, Any]) -> set[str]:
            ops = {o for o in seen["ops"] if LIBRARY_OP.match(o)}
            return ops | {k[:60] for k in seen["kernels"] if LIBRARY_KERNEL.search(k) and not (own and own.match(k))}

        new = sorted(library(cand) - library(ref))
        if new:
            warnings.append(
                f"The candidate calls library matrix-multiply or convolution routines that the reference does "
                f"not ({', '.join(new[:3])}): its speed may come from the library, not from its own kernels."
            )
        return warnings

    # timing --------------------------------------------------------------------------------------------

    def timed(self, reply: dict[str, Any], trusted_ms: float) -> None:
        """Note one batch of timed calls: whether its clock is borne out by the judge's own (see :meth:`clock`),
        and threads left running (a warning)."""
        self.clocks.append(_clock(reply, trusted_ms))
        if reply["stray_threads"]:
            note = (
                "The candidate leaves threads running after run() returns; the judge waited for them before stopping the clock."
            )
            if note not in self.warnings:
                self.warnings.append(note)

    def clock(self) -> None:
        """A warning when most batches' clocks are not borne out by the judge's: a patched timer is off in every
        batch, where a process the machine was slow to wake is off in a few."""
        problems = [p for p in self.clocks if p]
        if len(problems) * 2 > len(self.clocks) and problems[0] not in self.warnings:
            self.warnings.append(problems[0])

    def _fingerprints(self, candidate: torch.Tensor, reference: torch.Tensor, shape: tuple, first: int = 0) -> None:
        """Rejected when the outputs of the timed calls differ from the reference's (compared by fingerprint): the
        reference made the batch's calls from ``first`` on, the candidate all of them."""
        from kernel_lab.verify.compare import tolerance, uses_tf32

        candidate = candidate[first : first + len(reference)]
        if candidate.shape != reference.shape:
            raise Rejected(
                f"the candidate's outputs during timing on shape {shape} are not the reference's (another number or shape)"
            )
        sample = next(e for e in self.judge._expected.values() if e.set.shape == shape)
        rtol, atol = max(
            tolerance(t.dtype, uses_tf32(self.judge.reference_source), self.judge.settings.rtol, self.judge.settings.atol)
            for t in sample.outputs
        )
        for call, (c_row, r_row) in enumerate(zip(candidate, reference)):
            if not fingerprints_agree(c_row, r_row, rtol, atol):
                raise Rejected(
                    f"the candidate's output of timed call {first + call + 1} on shape {shape} differs from the "
                    "reference's (the timed calls get fresh inputs too): it gives right answers only when checked"
                )

    def _above_roof(self, sets: list[InputSet], headline: Timing) -> str | None:
        """Bytes the headline shape must move (inputs read once, outputs written once) over the DRAM peak."""
        known = hardware.model(self.judge._device_name)
        if known is None or headline.candidate_ms <= 0:
            return None
        e = self.judge._expected[sets[0].id]
        moved = e.input_bytes + sum(t.numel() * t.element_size() for t in e.outputs)
        rate = moved / (headline.candidate_ms * 1e-3)
        peak = known[1].dram_bytes_per_s
        if rate > ROOF_MARGIN * peak:
            return (
                f"The candidate would move its inputs and outputs at {rate / 1e12:.2f} TB/s, above the "
                f"{self.judge._device_name}'s {peak / 1e12:.2f} TB/s memory peak: its timing cannot be real."
            )
        return None


def reference_calls(reference: list[float], candidates: list[list[float]]) -> int:
    """The reference's timed calls in the next round: a whole batch (CALLS_PER_BATCH, as each candidate) unless its
    calls take several times the fastest candidate's; then about as much time as that candidate's batch, one call at
    least. A slow reference's times spread little, where a short kernel's spread with its launch (13-21% of the
    median against 1.4-1.8% on the H100: benchmarks/race_h100_sampled_prints/): its calls are the ones that count.
    Which of the batch's calls the reference makes is drawn afresh each round, and no candidate knows it, so every
    call of a candidate's may be the one compared."""
    fastest = min((statistics.median(c) for c in candidates if c), default=0.0)
    if not reference or fastest <= 0:
        return CALLS_PER_BATCH
    return max(1, min(CALLS_PER_BATCH, round(CALLS_PER_BATCH * fastest / statistics.median(reference))))


def fingerprints_agree(candidate: torch.Tensor, reference: torch.Tensor, rtol: float, atol: float) -> bool:
    """Whether one timed call's fingerprints (per output: four projections, max |value|, count; see the sandbox's
    ``_fingerprint``) are those of outputs within tolerance of each other: each projection of a difference within
    tolerance is a sum of that many terms of random sign, each at most ``atol + rtol * top``."""
    per = 6
    for k in range(0, reference.numel(), per):
        top, count = float(reference[k + 4]), float(reference[k + 5])
        allowed = 3 * count**0.5 * (atol + rtol * top) + 1e-12
        if float((candidate[k : k + 4] - reference[k : k + 4]).abs().max()) > allowed:
            return False
    return True


def slower_shapes(shapes: tuple[Timing, ...]) -> tuple[str | None, str | None]:
    """(a warning, a note) when the candidate, faster on the headline shape (the first), is much slower on another:
    held against it (the warning) unless a call there costs mostly its launch from the host (:data:`HOST_BOUND_MS`)."""
    headline = shapes[0] if shapes else None
    slower = [t for t in shapes if t.significant and t.speedup < SLOWER]
    if headline is None or headline.speedup <= 1 or not slower:
        return None, None
    held = [t for t in slower if t.candidate_ms >= HOST_BOUND_MS]
    worst = min(held or slower, key=lambda t: t.speedup)
    said = f"The candidate is {1 / worst.speedup:.2f}× slower than the reference on shape {worst.shape}, "
    if held:
        return f"{said}though {headline.speedup:.2f}× faster on {headline.shape}.", None
    per_call = f"{worst.candidate_ms:.3f} ms against {worst.reference_ms:.3f} ms per call"
    return None, f"{said}{per_call}, less than launching a call from the host costs: not held against it."


def _clock(reply: dict[str, Any], trusted_ms: float) -> str | None:
    """A problem when the process's own clock disagrees with the judge's (it was tampered with), else None."""
    events, walls, batch = reply["events_ms"], reply["walls_ms"], reply["batch_ms"]
    if batch < 0.7 * trusted_ms - 20 or sum(walls) > 1.05 * batch + 1 or any(e > 1.05 * w + 0.05 for e, w in zip(events, walls)):
        return (
            "The candidate's process reported timings the judge's own clock does not bear out "
            f"({batch:.1f} ms for a batch the judge saw take {trusted_ms:.1f} ms): its timing cannot be trusted."
        )
    return None


def _hidden_work(events: list[float], walls: list[float], ref_events: list[float], ref_walls: list[float]) -> str | None:
    """Warn when CUDA-event time is far below the time until the GPU is idle (work on another stream): the wait
    after a call beyond the reference's own (the host's, to see the device idle), timed in the same turns."""

    def after(events: list[float], walls: list[float]) -> float:
        return statistics.median(w - e for e, w in zip(events, walls)) if events else 0.0

    event = statistics.median(events)
    unseen = after(events, walls) - after(ref_events, ref_walls)
    if unseen > max(event, 0.1):
        return (
            f"The candidate's time measured with CUDA events ({event:.3f} ms) is far below the time until the GPU "
            f"is idle ({event + unseen:.3f} ms, beyond what the reference's calls wait): it may run work on another "
            "CUDA stream that the events do not see, so its timing cannot be trusted."
        )
    return None


def verify(
    reference_source: str,
    candidate_source: str,
    *,
    seeds: int = 3,
    rtol: float | None = None,
    atol: float | None = None,
    time: bool = True,
    timeout: float = 120.0,
    device: str | None = None,
) -> Verdict:
    """Judge ``candidate_source`` against ``reference_source`` (whole cells); see :class:`Judge`.

    The reference cell's ``run`` defines the expected result and its ``SHAPES``/``make_inputs`` the inputs
    (``seeds`` input sets per shape). ``rtol``/``atol`` override the dtype-aware defaults; ``time`` times both
    versions when the candidate is correct; ``timeout`` (s) bounds the whole judgement; ``device`` ("cpu",
    "cuda", "cuda:1") defaults to the GPU when there is one. A candidate that fails, hangs or crashes gives
    ``correct=False`` with the reason, never an exception.
    """
    if seeds < 1:
        raise ValueError(f"seeds must be at least 1, not {seeds}")
    settings = Settings(seeds=seeds, rtol=rtol, atol=atol, verify_timeout=timeout)
    with Judge(reference_source, settings, device, time=time) as judge:
        return judge.check(candidate_source)
