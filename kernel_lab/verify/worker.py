"""The judge's worker: loads a reference and a candidate cell into one fresh process and compares them.

    python -m kernel_lab.verify.worker REFERENCE.py CANDIDATE.py RESULT.json
        [--seeds N] [--rtol R] [--atol A] [--no-time] [--device DEV] [--progress FILE]

:func:`kernel_lab.verify.verify` runs it in a subprocess with a timeout, since a candidate may
hang or crash. It writes RESULT.json (``correct``, ``reason``, ``warnings``, ``max_abs_err``,
``max_rel_err``, ``checks``, ``samples``) and keeps ``who<TAB>where`` of the step in flight in the
progress file, so the parent can say who hung or crashed, and where.

The checks, in order:

* Inputs come from the *reference* cell (its ``SHAPES`` and ``make_inputs``), never the candidate's,
  fresh for every input set (shape × seed), so a cached result fails on the next set.
* Per input set the candidate runs, then the reference, then the candidate again, each on its own
  copy of the same inputs and with the memory the allocator hands out next filled with NaN (poison),
  so unwritten elements, first-call-only work and the reference's leftovers show. Both candidate
  results must match the reference's (shape, dtype, NaN/inf places, values within the tolerance),
  and the candidate may change only the inputs the reference changes.
* A reference whose output is (near) constant cannot tell right from wrong: the verdict refuses.
* Once correct: the kernels each version launches are recorded (Triton launches by the file that
  defines the kernel, GPU kernels and aten operators by torch.profiler): the candidate must launch
  one of its own, and library GEMM/convolution the reference does not use is flagged.
* Timing: interleaved runs, caches flushed before each; on a GPU, CUDA-event time far below the time
  until the GPU is idle is flagged as work hidden on another stream.

Errors: ``max_abs_err`` is max |out - ref| over the finite elements and ``max_rel_err`` that divided
by max |ref| (a norm-wise measure, robust to cancellation in sums where single elements near zero
have large relative errors). An output passes when max |out - ref| <= atol + rtol * max |ref|.
"""

from __future__ import annotations

import argparse
import inspect
import json
import math
import os
import re
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import torch

from kernel_lab.builds import use_folder_for
from kernel_lab.cells import describe as describe_exception
from kernel_lab.cells import kernel_names

#: Default (rtol, atol) by the dtype of the reference's output; other dtypes are compared exactly.
TOLERANCES: dict[torch.dtype, tuple[float, float]] = {
    torch.float64: (1e-7, 1e-9),
    torch.float32: (1e-4, 1e-5),
    torch.float16: (1e-2, 1e-2),
    torch.bfloat16: (2e-2, 1e-2),
}
TF32_TOLERANCE = (1e-2, 1e-2)  # float32 outputs of a reference that multiplies in TF32
FP8_TOLERANCE = (1e-1, 1e-1)  # 8-bit floats
POISON_BYTES = {"cuda": 256 << 20, "cpu": 16 << 20}
FLUSH_BYTES = {"cuda": 256 << 20, "cpu": 32 << 20}  # larger than the H100's 50 MB L2
TIME_BUDGET_S = 1.0
MIN_REPEATS, MAX_REPEATS = 10, 500
LIBRARY_OP = re.compile(
    r"aten::(mm|addmm|bmm|baddbmm|addbmm|matmul|linear|_scaled_mm|_int_mm|_?convolution|conv(?:\d|_transpose)\w*"
    r"|cudnn_convolution\w*|mkldnn_convolution|_scaled_dot_product\w+)$"
)
LIBRARY_KERNEL = re.compile(r"gemm|cublas|cutlass|cudnn|xmma|nvjet|convolve|conv[123]d|winograd", re.IGNORECASE)
_TF32 = re.compile(r"allow_tf32\s*=\s*True|set_float32_matmul_precision\(\s*['\"](high|medium)")


class Fail(Exception):
    """The candidate cannot be accepted (or judged); ``str(fail)`` is the one-line reason."""


@dataclass
class Report:
    """What the worker hands back in RESULT.json."""

    correct: bool = False
    reason: str = ""
    warnings: list[str] = field(default_factory=list)
    max_abs_err: float | None = None
    max_rel_err: float | None = None
    checks: int = 0
    samples: dict[str, list[float]] | None = None

    def record(self, abs_err: float, rel_err: float) -> None:
        """Keep the largest errors seen."""
        self.max_abs_err = max(abs_err, self.max_abs_err or 0.0)
        self.max_rel_err = max(rel_err, self.max_rel_err or 0.0)


@dataclass
class Cell:
    """A loaded cell: ``who`` is "reference" or "candidate"."""

    who: str
    path: Path
    source: str
    namespace: dict[str, Any]

    @property
    def run(self) -> Callable[..., Any]:
        return self.namespace["run"]


@dataclass
class Launches:
    """What one call launched: Triton kernels (by defining file), GPU kernels, aten operators."""

    files: set[str]
    kernels: set[str]
    ops: set[str]


class Progress:
    """Keeps ``who<TAB>where`` of the step in flight in a file, read by the parent on a hang or crash."""

    def __init__(self, path: Path | None) -> None:
        self.path = path

    def __call__(self, who: str, where: str) -> None:
        if self.path is not None:
            self.path.write_text(f"{who}\t{where}")


def describe(exc: BaseException, cell: Path) -> str:
    """``Type: message at line N`` on one line; N is the last line of ``cell`` in the traceback."""
    return describe_exception(exc, str(cell))


def load(path: Path, who: str, progress: Progress) -> Cell:
    """Execute a cell file into its own namespace; it must define ``run``."""
    progress(who, "while loading the cell")
    source = path.read_text()
    try:
        code = compile(source, str(path), "exec")
    except SyntaxError as exc:
        raise Fail(f"the {who} does not compile: {describe(exc, path)}") from None
    namespace: dict[str, Any] = {"__name__": f"kernel_lab_{who}", "__file__": str(path)}
    use_folder_for(source)
    try:
        exec(code, namespace)  # noqa: S102 - running the cells is the point
    except BaseException as exc:  # noqa: BLE001 - any failure of the cell is the verdict
        raise Fail(f"the {who} raised {describe(exc, path)} while loading") from None
    if not callable(namespace.get("run")):
        raise Fail(f"the {who} defines no run(*inputs) function: a cell needs make_inputs() and run(*inputs)")
    return Cell(who, path, source, namespace)


def watch_triton_launches() -> set[str]:
    """Patch Triton's launch entry points (compiled and interpreted) to record each kernel's file."""
    launched: set[str] = set()
    try:
        from triton.runtime import interpreter, jit
    except ImportError:
        return launched
    for cls in (jit.JITFunction, interpreter.InterpretedFunction):

        def run(self: Any, *args: Any, _original: Callable[..., Any] = cls.run, **kwargs: Any) -> Any:
            launched.add(self.fn.__code__.co_filename)
            return _original(self, *args, **kwargs)

        cls.run = run
    return launched


@contextmanager
def seeded(seed: int) -> Iterator[None]:
    """``torch.manual_seed(seed)``, and a cell's own ``torch.manual_seed(s)`` becomes ``s + 7919 * seed``.

    Cells often seed inside make_inputs (the samples do): without this, every seed would give
    the same inputs and a candidate returning a cached result would pass.
    """
    original = torch.manual_seed
    original(seed)
    torch.manual_seed = lambda s: original(int(s) + 7919 * seed)  # type: ignore[assignment]
    try:
        yield
    finally:
        torch.manual_seed = original


def input_sets(reference: Cell, seeds: int) -> list[tuple[tuple, int, str]]:
    """``(shape, seed, description)`` for every input set: ``SHAPES`` (or one empty shape) × seeds."""
    declared = reference.namespace.get("SHAPES")
    shapes = [tuple(s) if isinstance(s, (tuple, list)) else (s,) for s in declared] if declared else [()]
    sets = [(shape, seed) for shape in shapes for seed in range(seeds)]
    return [
        (shape, seed, f"input set {k} of {len(sets)}: seed {seed}" + (f", shape {shape}" if declared else ""))
        for k, (shape, seed) in enumerate(sets, 1)
    ]


def make_inputs(reference: Cell, shape: tuple, seed: int, where: str) -> tuple:
    """Fresh inputs from the reference's ``make_inputs(*shape)`` under ``seed``."""
    make = reference.namespace.get("make_inputs")
    if not callable(make):
        raise Fail("the reference defines no make_inputs() function: a cell needs make_inputs() and run(*inputs)")
    with seeded(seed):
        try:
            inputs = make(*shape)
        except BaseException as exc:  # noqa: BLE001
            raise Fail(f"the reference's make_inputs raised {describe(exc, reference.path)} ({where})") from None
    return tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)


def device_of(values: tuple) -> torch.device:
    """The device of the first tensor among ``values`` (the default device if there is none)."""
    for v in values:
        if isinstance(v, torch.Tensor):
            return v.device
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def clone(values: tuple) -> tuple:
    return tuple(v.clone() if isinstance(v, torch.Tensor) else v for v in values)


def changed(after: tuple, before: tuple) -> list[int]:
    """Positions of the tensors whose bits differ between ``after`` and ``before``."""

    def same(a: torch.Tensor, b: torch.Tensor) -> bool:
        if a.shape != b.shape or a.dtype != b.dtype:
            return False
        return torch.equal(a.reshape(-1).view(torch.uint8), b.reshape(-1).view(torch.uint8))

    return [i for i, (a, b) in enumerate(zip(after, before)) if isinstance(b, torch.Tensor) and not same(a, b)]


def poison(device: torch.device, sizes: set[int]) -> None:
    """Fill the memory the allocator will hand out next with NaN (all bits set).

    On a GPU the caching allocator's cache is emptied, then refilled with poisoned blocks: one large
    block (split for tensors over 1 MB) and small-pool blocks, among them several of each size up to
    1 MB seen so far. On the CPU (malloc, no cache) several blocks of each size seen so far, up to
    malloc's 32 MB mmap threshold: best effort, small tensors may still get unpoisoned memory.
    """
    cuda = device.type == "cuda"
    big = POISON_BYTES.get(device.type, POISON_BYTES["cpu"])
    if cuda:
        torch.cuda.empty_cache()
        big = min(big, torch.cuda.mem_get_info(device)[0] // 2)
    limit = 1 << 20 if cuda else 32 << 20
    sized = [n for n in sorted(sizes) if n <= limit for _ in range(8)]
    sized += [1 << 20] * 16 if cuda else []  # the small pool serves up to 1 MB from 2 MB segments
    blocks = [torch.empty(n, dtype=torch.uint8, device=device) for n in (big, *sized)]
    for block in blocks:
        block.fill_(0xFF)
    del blocks


def call(cell: Cell, inputs: tuple, where: str, sizes: set[int], progress: Progress) -> Any:
    """``cell.run(*inputs)`` on poisoned memory, synchronized; an exception becomes a Fail."""
    device = device_of(inputs)
    poison(device, sizes)
    progress(cell.who, f"on {where}")
    try:
        out = cell.run(*inputs)
        synchronize(device)
    except BaseException as exc:  # noqa: BLE001
        raise Fail(f"the {cell.who} raised {describe(exc, cell.path)} ({where})") from None
    return out


def leaves(value: Any, who: str) -> list[torch.Tensor]:
    """The tensors of a result: a tensor, a number, or (nested) tuples and lists of them."""
    if isinstance(value, torch.Tensor):
        return [value]
    if value is None:
        return []
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in leaves(v, who)]
    if isinstance(value, (bool, int, float)):
        return [torch.tensor(value, dtype=torch.float64 if isinstance(value, float) else None)]
    raise Fail(f"the {who} returned a {type(value).__name__}: run must return a tensor or a tuple of tensors")


def uses_tf32(source: str) -> bool:
    """Whether a cell multiplies float32 in TF32: Triton's ``tl.dot`` (unless "ieee") or torch's TF32 switches."""
    return ("tl.dot(" in source and "ieee" not in source) or bool(_TF32.search(source))


def tolerance(dtype: torch.dtype, tf32: bool, rtol: float | None, atol: float | None) -> tuple[float, float]:
    """(rtol, atol) for an output of ``dtype``; explicit values win."""
    if dtype == torch.float32 and tf32:
        default = TF32_TOLERANCE
    elif dtype.is_floating_point:
        default = TOLERANCES.get(dtype, FP8_TOLERANCE)
    else:
        default = (0.0, 0.0)
    return (default[0] if rtol is None else rtol, default[1] if atol is None else atol)


def _index(mask: torch.Tensor) -> tuple[int, ...]:
    return tuple(torch.nonzero(mask)[0].tolist())


Errors = tuple[float, float]  # (max abs error, max rel error)


def compare(got: torch.Tensor, want: torch.Tensor, rtol: float, atol: float) -> tuple[str | None, Errors | None]:
    """(what is wrong or None, (max abs error, max rel error)) of one output against the reference's.

    The errors are None where they are not defined (another shape or dtype, NaN or inf mismatch).
    """
    if got.shape != want.shape:
        return f"has shape {tuple(got.shape)} but the reference's has shape {tuple(want.shape)}", None
    if got.dtype != want.dtype:
        return (f"has dtype {got.dtype} but the reference's has {want.dtype}: keep the precision the reference declares"), None
    if got.device != want.device:
        return f"is on {got.device} but the reference's is on {want.device}", None
    g = (torch.view_as_real(got) if got.is_complex() else got).double()
    w = (torch.view_as_real(want) if want.is_complex() else want).double()
    if (bad := g.isnan() & ~w.isnan()).any():
        return (
            f"has {int(bad.sum())} NaN values where the reference has numbers (first at index {list(_index(bad))}): "
            "elements left unwritten, or invalid math"
        ), None
    if (bad := w.isnan() & ~g.isnan()).any():
        return f"has numbers where the reference has NaN (first at index {list(_index(bad))})", None
    if (bad := (g.isinf() | w.isinf()) & (g != w)).any():
        i = _index(bad)
        return f"has infinite values unlike the reference (index {list(i)}: {g[i]:g} instead of {w[i]:g})", None
    finite = w.isfinite()
    diff = (g - w).abs().where(finite, 0.0)
    max_abs = float(diff.max()) if diff.numel() else 0.0
    scale = float(w.abs().where(finite, 0.0).max()) if w.numel() else 0.0
    errors = (max_abs, max_abs / scale if scale else (0.0 if max_abs == 0 else math.inf))
    allowed = atol + rtol * scale
    if max_abs > allowed:
        i = _index(diff == max_abs)
        problem = (
            f"differs from the reference by up to {max_abs:.3g} (index {list(i)}: {g[i]:.6g} instead of "
            f"{w[i]:.6g}), more than the tolerance {allowed:.3g} = atol {atol:g} + rtol {rtol:g} × max|reference| "
            f"{scale:.3g}"
        )
        return problem, errors
    return None, errors


def near_constant(t: torch.Tensor) -> bool:
    """Whether the finite values of ``t`` barely vary (std <= 1e-6 max|t|, e.g. all zeros)."""
    v = (torch.view_as_real(t) if t.is_complex() else t).double().flatten()
    v = v[v.isfinite()]
    return v.numel() < 2 or bool(v.std() <= 1e-6 * v.abs().max())


@dataclass
class Expected:
    """The reference's results on one input set: its outputs, then the inputs it writes in place."""

    tensors: list[torch.Tensor]
    labels: list[str]
    in_place: list[int]
    tolerances: list[tuple[float, float]]


def expected_results(out: Any, ref_inputs: tuple, pristine: tuple, tf32: bool, args: argparse.Namespace) -> Expected:
    in_place = changed(ref_inputs, pristine)
    tensors = leaves(out, "reference") + [ref_inputs[i] for i in in_place]
    outputs = len(tensors) - len(in_place)
    labels = ["output" if len(tensors) == 1 else f"output {i}" for i in range(outputs)]
    labels += [f"input {i + 1} (written in place)" for i in in_place]
    tolerances = [tolerance(t.dtype, tf32, args.rtol, args.atol) for t in tensors]
    return Expected(tensors, labels, in_place, tolerances)


def match(candidate: Cell, out: Any, used: tuple, pristine: tuple, expected: Expected, where: str, report: Report) -> None:
    """Raise Fail unless one candidate call (result ``out``, inputs ``used``) matches the reference's."""
    extra = [i for i in changed(used, pristine) if i not in expected.in_place]
    if extra:
        names = list(inspect.signature(candidate.run).parameters)
        name = names[extra[0]] if extra[0] < len(names) else f"argument {extra[0] + 1}"
        raise Fail(
            f"the candidate changed its input {name}, which the reference leaves unchanged ({where}): "
            "write results to new tensors"
        )
    got = leaves(out, "candidate") + [used[i] for i in expected.in_place]
    if len(got) != len(expected.tensors):
        raise Fail(f"the candidate returned {len(got)} outputs but the reference {len(expected.tensors)} ({where})")
    for label, g, w, tol in zip(expected.labels, got, expected.tensors, expected.tolerances):
        problem, errors = compare(g, w, *tol)
        if errors is not None:
            report.record(*errors)
        if problem:
            raise Fail(f"the candidate's {label} {problem} ({where})")


def check(
    reference: Cell,
    candidate: Cell,
    inputs: tuple,
    where: str,
    args: argparse.Namespace,
    sizes: set[int],
    report: Report,
    progress: Progress,
) -> None:
    """Candidate, reference, candidate on copies of ``inputs``; raise Fail unless both candidate calls match."""
    pristine = clone(inputs)
    sizes.update(v.nbytes for v in inputs if isinstance(v, torch.Tensor))
    first = call(candidate, inputs, where, sizes, progress)
    ref_inputs = clone(pristine)
    out = call(reference, ref_inputs, where, sizes, progress)
    expected = expected_results(out, ref_inputs, pristine, uses_tf32(reference.source), args)
    sizes.update(t.nbytes for t in expected.tensors)
    for label, t in zip(expected.labels, expected.tensors):
        if t.numel() > 1 and near_constant(t):
            raise Fail(
                f"the reference's {label} is (near) constant ({where}): cannot judge correctness; "
                "use inputs that give varied outputs"
            )
    match(candidate, first, inputs, pristine, expected, f"{where}; first call", report)
    second_inputs = clone(pristine)
    second = call(candidate, second_inputs, where, sizes, progress)
    match(candidate, second, second_inputs, pristine, expected, f"{where}; second call, after the reference ran", report)


def observe(cell: Cell, inputs: tuple, launched: set[str], sizes: set[int], progress: Progress) -> Launches:
    """What one call of ``cell`` launches: Triton kernels, GPU kernels (torch.profiler), aten operators."""
    device = device_of(inputs)
    activities = [torch.profiler.ProfilerActivity.CPU]
    if device.type == "cuda":
        activities.append(torch.profiler.ProfilerActivity.CUDA)
    launched.clear()
    with torch.profiler.profile(activities=activities) as prof:
        call(cell, inputs, "the largest input set, while recording its kernels", sizes, progress)
    events = prof.events()
    kernels = {e.name for e in events if e.device_type == torch.autograd.DeviceType.CUDA}
    ops = {e.name for e in events if e.device_type == torch.autograd.DeviceType.CPU}
    return Launches(set(launched), kernels, ops)


def launch_warnings(reference: Launches, candidate: Launches, cell: Cell) -> list[str]:
    """Warn when the candidate launches none of its own kernels, or library GEMM/conv the reference does not."""
    names = kernel_names(cell.source)
    own = re.compile(rf"(?:void )?(?:\w+::)*(?:{'|'.join(map(re.escape, names))})\b") if names else None

    def library(launches: Launches) -> set[str]:
        ops = {o for o in launches.ops if LIBRARY_OP.match(o)}
        return ops | {k[:60] for k in launches.kernels if LIBRARY_KERNEL.search(k) and not (own and own.match(k))}

    warnings = []
    if str(cell.path) not in candidate.files and not (own and any(own.match(k) for k in candidate.kernels)):
        warnings.append("The candidate launched none of its own kernels: it may fall back to PyTorch.")
    new = sorted(library(candidate) - library(reference))
    if new:
        warnings.append(
            f"The candidate calls library matrix-multiply or convolution routines that the reference does "
            f"not ({', '.join(new[:3])}): its speed may come from the library, not from its own kernels."
        )
    return warnings


def timed(fn: Callable[[], object], device: torch.device) -> Callable[[], float]:
    """Run ``fn`` once; the returned function gives its time in ms (CUDA events on a GPU, else the host clock)."""
    if device.type == "cuda":
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        return lambda: start.elapsed_time(end)
    t0 = time.perf_counter()
    fn()
    ms = (time.perf_counter() - t0) * 1e3
    return lambda: ms


def bench(fns: dict[str, Callable[[], object]], device: torch.device) -> dict[str, list[float]]:
    """Interleaved samples (ms) of each function within TIME_BUDGET_S, caches flushed before every run."""
    flush = torch.empty(FLUSH_BYTES.get(device.type, FLUSH_BYTES["cpu"]), dtype=torch.uint8, device=device)

    def sample(fn: Callable[[], object]) -> Callable[[], float]:
        flush.zero_()
        return timed(fn, device)

    t0 = time.perf_counter()
    for _ in range(3):  # warm-up, and the cost of one round
        for fn in fns.values():
            sample(fn)
    synchronize(device)
    per_round = (time.perf_counter() - t0) / 3
    rounds = max(MIN_REPEATS, min(MAX_REPEATS, int(TIME_BUDGET_S / max(per_round, 1e-9))))
    pending: dict[str, list[Callable[[], float]]] = {name: [] for name in fns}
    for r in range(rounds):
        order = list(fns.items()) if r % 2 == 0 else list(reversed(fns.items()))  # no favoured position
        for name, fn in order:
            pending[name].append(sample(fn))
    synchronize(device)
    return {name: [t() for t in ts] for name, ts in pending.items()}


def hidden_work_warning(fn: Callable[[], object], device: torch.device) -> str | None:
    """Warn when CUDA-event time is far below the time until the GPU is idle (work on another stream)."""
    events, walls = [], []
    for _ in range(10):
        torch.cuda.synchronize(device)
        t0 = time.perf_counter()
        elapsed = timed(fn, device)
        torch.cuda.synchronize(device)
        walls.append((time.perf_counter() - t0) * 1e3)
        events.append(elapsed())
    event, wall = statistics.median(events), statistics.median(walls)
    if event < 0.5 * wall and wall - event > 0.1:
        return (
            f"The candidate's time measured with CUDA events ({event:.3f} ms) is far below the time until the GPU "
            f"is idle ({wall:.3f} ms): it may run work on another CUDA stream that the events do not see, so its "
            "timing cannot be trusted."
        )
    return None


def guarded(cell: Cell, inputs: tuple) -> Callable[[], object]:
    """``cell.run(*inputs)`` as a zero-argument function whose exceptions become a Fail."""

    def go() -> object:
        try:
            return cell.run(*inputs)
        except Exception as exc:  # noqa: BLE001
            raise Fail(f"the {cell.who} raised {describe(exc, cell.path)} while being timed") from None

    return go


def judge(args: argparse.Namespace, report: Report, progress: Progress) -> None:
    """All checks; raises Fail with the reason, else leaves ``report`` correct (with warnings and samples)."""
    if args.device and args.device.startswith("cuda"):
        if not torch.cuda.is_available():
            raise Fail(
                f"no CUDA GPU is visible, so nothing can run on {args.device}: verify on a GPU machine or use device='cpu'"
            )
        if torch.device(args.device).index is not None:
            torch.cuda.set_device(torch.device(args.device))
    if not torch.cuda.is_available():
        os.environ.setdefault("TRITON_INTERPRET", "1")  # Triton can only run interpreted without a GPU
    launched = watch_triton_launches()
    reference = load(args.reference, "reference", progress)
    candidate = load(args.candidate, "candidate", progress)
    sizes: set[int] = set()
    largest = ((), -1)
    for shape, seed, where in input_sets(reference, args.seeds):
        inputs = make_inputs(reference, shape, seed, where)
        report.checks += 1
        check(reference, candidate, inputs, where, args, sizes, report, progress)
        nbytes = sum(v.nbytes for v in inputs if isinstance(v, torch.Tensor))
        largest = max(largest, (shape, nbytes), key=lambda s: s[1])
    inputs = make_inputs(reference, largest[0], 0, "the largest input set")
    seen = {c.who: observe(c, clone(inputs), launched, sizes, progress) for c in (reference, candidate)}
    report.warnings += launch_warnings(seen["reference"], seen["candidate"], candidate)
    if args.time:
        device = device_of(inputs)
        progress("candidate or the reference", "while being timed")
        fns = {c.who: guarded(c, clone(inputs)) for c in (reference, candidate)}
        report.samples = bench(fns, device)
        if device.type == "cuda" and (hidden := hidden_work_warning(fns["candidate"], device)):
            report.warnings.append(hidden)
    report.correct, report.reason = True, "ok"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m kernel_lab.verify.worker")
    parser.add_argument("reference", type=Path)
    parser.add_argument("candidate", type=Path)
    parser.add_argument("result", type=Path)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--rtol", type=float, default=None)
    parser.add_argument("--atol", type=float, default=None)
    parser.add_argument("--no-time", dest="time", action="store_false")
    parser.add_argument("--device", default=None)
    parser.add_argument("--progress", type=Path, default=None)
    args = parser.parse_args(argv)
    report = Report()
    try:
        judge(args, report, Progress(args.progress))
    except Fail as fail:
        report.correct, report.reason = False, str(fail)
    partial = args.result.with_suffix(".partial")
    partial.write_text(json.dumps(asdict(report), allow_nan=True))
    partial.replace(args.result)  # the parent never reads a half-written result
    return 0


if __name__ == "__main__":
    sys.exit(main())
