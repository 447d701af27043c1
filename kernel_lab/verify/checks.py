"""The judge's checks that weigh what it measured: small functions over plain data, each returning a typed
:class:`~kernel_lab.verify.findings.Finding` (or None), each threshold a named constant here.

Correctness (outputs against the reference's and the float64 truth) is :mod:`kernel_lab.verify.compare`; these decide
what a correct candidate's records and timings say about it.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from kernel_lab import hardware
from kernel_lab.verify.findings import Finding
from kernel_lab.verify.verdict import Timing

if TYPE_CHECKING:
    import torch

#: a speedup above this from changed code is held for a second look
SUSPICIOUS_SPEEDUP = 10.0
#: the own kernels' share of the GPU time under which a candidate is a fall-back
FALLBACK_SHARE = 0.5
#: bytes per second over this many times the DRAM peak cannot be real
ROOF_MARGIN = 1.15
#: what a call moves up to this many bytes may stay in the L2 cache between calls (50 MB on the H100 and H200,
#: 40 MB on the A100), which serves several times the DRAM bandwidth: then only over CACHED_MARGIN times it
L2_BYTES = 64 << 20
CACHED_MARGIN = 4.0
#: a declared shape on which the candidate runs this fraction of the reference's speed, or less, blocks it
SLOWER = 0.8
#: per call: under this, what a call costs a user is mostly its launch from the host, which the judge's timing leaves
#: out (a Triton launch from Python: 0.02-0.06 ms on the H100; a 4096-float add's kernel: 0.004 ms;
#: benchmarks/launch_hidden_h100/), so a slowdown of the kernels there is noted, not held against the candidate
HOST_BOUND_MS = 0.05
LIBRARY_OP = re.compile(
    r"aten::(mm|addmm|bmm|baddbmm|addbmm|matmul|linear|_scaled_mm|_int_mm|_?convolution|conv(?:\d|_transpose)\w*"
    r"|cudnn_convolution\w*|mkldnn_convolution|_scaled_dot_product\w+)$"
)
#: PyTorch's kernel for copies and casts (``copy_``, ``.contiguous()``, ``.to(dtype)``): it lays data out, so its time
#: is no one's work in a candidate's time share (:func:`fallback`); an output that only it computes is knocked out
LAYOUT_KERNEL = re.compile(r"direct_copy_kernel")
LIBRARY_KERNEL = re.compile(r"gemm|cublas|cutlass|cudnn|xmma|nvjet|convolve|conv[123]d|winograd", re.IGNORECASE)
#: aten operators that allocate, view or move data: any other is computation
DATA_OP = re.compile(
    r"aten::(empty\w*|zeros\w*|ones\w*|full\w*|new_\w+|arange|view\w*|reshape|_reshape_alias|_unsafe_view|as_strided\w*"
    r"|contiguous|clone|copy_|_to_copy|to|fill_|zero_|t|transpose\w*|permute|expand\w*|narrow|slice|select|unsqueeze\w*"
    r"|squeeze\w*|flatten|unflatten|detach\w*|alias|lift\w*|resize_|item|_local_scalar_dense|split\w*|chunk|unbind"
    r"|cat|stack|set_|result_type|numel|size|stride|dim|is_nonzero|record_stream|_has_compatible_shallow_copy_type)$"
)


def suspicious_speedup(headline: Timing | None, launch_only: bool) -> Finding | None:
    """Over :data:`SUSPICIOUS_SPEEDUP` from changed code. A candidate that changes only launch parameters of the cell's
    own kernels runs the same code, right on fresh inputs and shapes: a large speedup is then the point."""
    if headline is None or headline.speedup <= SUSPICIOUS_SPEEDUP or launch_only:
        return None
    return Finding(
        "suspicious_speedup",
        f"The candidate is {headline.speedup:.1f}× faster than the reference: a speedup over {SUSPICIOUS_SPEEDUP:g}× "
        "deserves a second look (does it really do all the work?).",
        {"speedup": headline.speedup},
    )


def slower_shapes(shapes: Sequence[Timing]) -> tuple[Finding | None, Finding | None]:
    """(a warning, a note) when the candidate, significantly faster on the headline shape (the first), is significantly
    and much slower on another: held against it unless a call there costs mostly its launch from the host
    (:data:`HOST_BOUND_MS`). A headline within noise holds nothing against it."""
    headline = shapes[0] if shapes else None
    slower = [t for t in shapes if t.significant and t.speedup < SLOWER]
    if headline is None or headline.speedup <= 1 or not headline.significant or not slower:
        return None, None
    held = [t for t in slower if t.candidate_ms >= HOST_BOUND_MS]
    worst = min(held or slower, key=lambda t: t.speedup)
    said = f"The candidate is {1 / worst.speedup:.2f}× slower than the reference on shape {worst.shape}, "
    data = {"shape": list(worst.shape), "speedup": worst.speedup, "headline": headline.speedup}
    if held:
        return Finding("slower_shape", f"{said}though {headline.speedup:.2f}× faster on {headline.shape}.", data), None
    per_call = f"{worst.candidate_ms:.3f} ms against {worst.reference_ms:.3f} ms per call"
    return None, Finding(
        "host_bound_shape", f"{said}{per_call}, less than launching a call from the host costs: not held against it.", data
    )


def untrusted_clock(reply: Mapping[str, Any], trusted_ms: float) -> Finding | None:
    """When a batch's own clock (its process's) disagrees with the judge's: it was tampered with."""
    events, walls, batch = reply["events_ms"], reply["walls_ms"], reply["batch_ms"]
    if batch < 0.7 * trusted_ms - 20 or sum(walls) > 1.05 * batch + 1 or any(e > 1.05 * w + 0.05 for e, w in zip(events, walls)):
        return Finding(
            "untrusted_clock",
            "The candidate's process reported timings the judge's own clock does not bear out "
            f"({batch:.1f} ms for a batch the judge saw take {trusted_ms:.1f} ms): its timing cannot be trusted.",
            {"reported_ms": batch, "judge_ms": trusted_ms},
        )
    return None


def clock(problems: Sequence[Finding | None]) -> Finding | None:
    """The first problem when most batches' clocks are not borne out: a patched timer is off in every batch, where a
    process the machine was slow to wake is off in a few."""
    found = [p for p in problems if p]
    return found[0] if len(found) * 2 > len(problems) else None


#: the candidate's batches on a shape, at least, for its least one to stand for all in the checks of time outside its
#: events or its calls (a two-core CI machine under load once saw an honest candidate's one batch on a small shape
#: 10.9 ms a call over the reference's); the headline shape always has as many (kernel_lab.verify.timing.MIN_SAMPLES
#: calls), the others often one
LEAST_BATCHES = 2


def hidden_work(mine: list[tuple[list[float], list[float]]], reference: list[tuple[list[float], list[float]]]) -> Finding | None:
    """When CUDA-event time is far below the time until the GPU is idle (work on another stream): the wait after a
    call beyond the reference's own (the host's, to see the device idle), timed in the same turns. Each side's batches
    are (events, walls) pairs. Work on another stream is in every call, so the candidate's least batch is held against
    the reference's median, and a shape timed in fewer than :data:`LEAST_BATCHES` of its batches is not judged: one
    batch that waited for other work on the GPU (another process's) decides nothing on its own. (On the H200 at stop
    49, honest CUDA lessons judged beside other lessons on one GPU were flagged 0.18-0.27 ms beyond the reference, one
    of them with 0.004 ms calls: a small shape after the headline.)"""

    def after(batch: tuple[list[float], list[float]]) -> float:
        events, walls = batch
        return statistics.median(w - e for e, w in zip(events, walls))

    mine, reference = [b for b in mine if b[0]], [b for b in reference if b[0]]
    if len(mine) < LEAST_BATCHES or not reference:
        return None
    event = statistics.median(e for events, _ in mine for e in events)
    waits = [after(batch) for batch in mine]
    unseen = min(waits) - statistics.median(map(after, reference))
    if unseen > max(event, 0.1):
        return Finding(
            "hidden_work",
            f"The candidate's time measured with CUDA events ({event:.3f} ms) is far below the time until the GPU "
            f"is idle (at least {event + unseen:.3f} ms in each of its {len(mine)} batches, beyond what the "
            "reference's calls wait): it may run work on another CUDA stream that the events do not see, so its "
            "timing cannot be trusted.",
            {"event_ms": event, "idle_ms": event + unseen, "waits_ms": waits},
        )
    return None


def above_roof(moved_bytes: int, ms: float, device_name: str) -> Finding | None:
    """Bytes the headline shape must move (inputs read once, outputs written once) over the DRAM peak (a physics
    floor: a time below what the bytes need at the peak is not real; what fits the L2 cache gets its margin)."""
    known = hardware.model(device_name)
    if known is None or ms <= 0:
        return None
    rate, peak = moved_bytes / (ms * 1e-3), known[1].dram_bytes_per_s
    if rate > (ROOF_MARGIN if moved_bytes > L2_BYTES else CACHED_MARGIN) * peak:
        return Finding(
            "above_roof",
            f"The candidate would move its inputs and outputs at {rate / 1e12:.2f} TB/s, above the {device_name}'s "
            f"{peak / 1e12:.2f} TB/s memory peak: its timing cannot be real.",
            {"bytes_per_s": rate, "peak": peak},
        )
    return None


def stray_threads() -> Finding:
    return Finding(
        "stray_threads",
        "The candidate leaves threads running after run() returns; the judge waited for them before stopping the clock.",
    )


def fallback(seen: Mapping[str, Any], own: re.Pattern[str] | None) -> Finding | None:
    """When the candidate's GPU time (its record under the profiler: ``kernels`` by time, its own launches) is not
    spent in its own kernels, its copies and casts (:data:`LAYOUT_KERNEL`) left out: a final ``.contiguous()`` of its
    own kernel's output is its own work (whether its output is its kernels' work: :func:`knocked_out`)."""
    kernels: dict[str, float] = {k: t for k, t in seen["kernels"].items() if not LAYOUT_KERNEL.search(k)}
    total = sum(kernels.values())
    mine = sum(t for k, t in kernels.items() if own and own.match(k))
    if not seen["own_launches"] and not mine:
        return Finding("fallback", "The candidate launched none of its own kernels: it may fall back to PyTorch.")
    if total > 0 and mine / total < FALLBACK_SHARE:
        others = sorted((k for k in kernels if not (own and own.match(k))), key=lambda k: -kernels[k])
        return Finding(
            "fallback",
            f"Only {mine / total:.0%} of the candidate's GPU time is spent in its own kernels; the rest in "
            f"{', '.join(o[:50] for o in others[:3])}: a fall-back, whatever else it launches.",
            {"own_share": mine / total},
        )
    return None


def foreign_ops(seen: Mapping[str, Any], reference: Mapping[str, Any]) -> Finding | None:
    """PyTorch compute operators the candidate calls and the reference does not."""
    compute = sorted(op for op in set(seen["ops"]) - set(reference["ops"]) if not DATA_OP.match(op) and not LIBRARY_OP.match(op))
    if not compute:
        return None
    return Finding(
        "foreign_ops",
        f"The candidate computes with PyTorch operators the reference does not use ({', '.join(compute[:4])}): its result"
        " or its speed may come from PyTorch, not from its own kernels.",
        {"ops": compute},
    )


def library_calls(seen: Mapping[str, Any], reference: Mapping[str, Any], own: re.Pattern[str] | None) -> Finding | None:
    """Library matrix-multiply or convolution routines (operators or kernels) the candidate calls and the reference
    does not."""

    def library(record: Mapping[str, Any]) -> set[str]:
        ops = {o for o in record["ops"] if LIBRARY_OP.match(o)}
        return ops | {k[:60] for k in record["kernels"] if LIBRARY_KERNEL.search(k) and not (own and own.match(k))}

    new = sorted(library(seen) - library(reference))
    if not new:
        return None
    return Finding(
        "library_call",
        f"The candidate calls library matrix-multiply or convolution routines that the reference does not "
        f"({', '.join(new[:3])}): its speed may come from the library, not from its own kernels.",
        {"routines": new},
    )


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


#: a side's time outside its timed calls (by the judge's clock, per call) beyond the reference's is work moved out of the
#: timed window when it is over this share of the call's own time and over this floor (ms; the CPU's steps are coarser)
OUTSIDE_SHARE = 0.25
OUTSIDE_FLOOR_MS = {True: 0.2, False: 10.0}  # ms a call, on a GPU and on the CPU (a busy CPU's noise)
#: a batch whose one call holds this share of its calls' time (all the batch's work in one call): uneven
UNEVEN_SHARE = 0.6


def outside_calls(mine: list[float], reference: list[float], events: list[float], on_gpu: bool) -> Finding | None:
    """When the candidate spends more time outside its timed calls than the reference does (per call, by the judge's
    own clock): work done before a call's clock starts or after it stops (in the judge's steps, or deferred). Such work
    is in every batch, so the candidate's least batch is held against the reference's median: a busy machine slowing
    some batches does not raise it. A shape timed in fewer than :data:`LEAST_BATCHES` of the candidate's batches
    (the shapes after the headline, often one) is not judged: its one batch may be the one a busy machine slowed, and
    work deferred from every call shows on the headline shape's many batches."""
    if len(mine) < LEAST_BATCHES or not reference or not events:
        return None
    excess = min(mine) - statistics.median(reference)
    event = statistics.median(events)
    if excess <= max(OUTSIDE_SHARE * (event + excess), OUTSIDE_FLOOR_MS[on_gpu]):
        return None
    return Finding(
        "outside_calls",
        f"The candidate spends {excess:.3f} ms a call more than the reference outside its timed calls (by the judge's "
        f"own clock), against {event:.3f} ms inside them: its work may be done where the clock does not run, so its "
        "timing cannot be trusted.",
        {"excess_ms": excess, "event_ms": event},
    )


def uneven_calls(batches: list[list[float]], reference: list[list[float]]) -> Finding | None:
    """When most of the candidate's batches have one call holding most of the batch's time, and the reference's do not:
    the work of every call done in one (the median of a batch hides it)."""

    def lopsided(batch: list[float]) -> bool:
        return len(batch) > 2 and max(batch) > UNEVEN_SHARE * sum(batch)

    mine = [b for b in batches if b]
    if not mine or sum(map(lopsided, mine)) * 2 <= len(mine) or sum(map(lopsided, reference)) * 2 > len(reference):
        return None
    return Finding(
        "uneven_calls",
        "In most of the candidate's timed batches one call takes most of the batch's time while the others take almost"
        " none: the work of every call may be done in one, so its median cannot be trusted.",
        {"batches": len(mine)},
    )


def left_running(reply: Mapping[str, Any]) -> Finding | None:
    """Threads or child processes a timed call left running (they were waited for before its clock stopped)."""
    if reply.get("stray_processes"):
        return Finding(
            "stray_processes",
            "The candidate starts processes that outlive run(); the judge waited for them before stopping the clock.",
        )
    return stray_threads() if reply.get("stray_threads") else None


def no_own_launches(reply: Mapping[str, Any], triton: bool) -> Finding | None:
    """Timed calls of a Triton cell that launched none of its own kernels: their results came from elsewhere."""
    none = sum(1 for n in reply.get("own_launches", ()) if n == 0)
    if not triton or not none:
        return None
    return Finding(
        "fallback",
        f"{none} of the candidate's timed calls launched none of its own Triton kernels: what they return is computed"
        " elsewhere (a fall-back), whatever the calls checked did.",
        {"calls": none},
    )


def knocked_out(survives: bool, reference_survives: bool) -> Finding | None:
    """When the candidate's output is still right with its own kernels made to do nothing (and the reference's is
    not): the work is done elsewhere (PyTorch, numpy, a compiled graph, data operators)."""
    if not survives or reference_survives:
        return None
    return Finding(
        "fallback",
        "The candidate's output is still right when its own kernels are made to do nothing: its result is computed"
        " elsewhere (PyTorch, numpy, torch.compile or data operators), not by its kernels.",
    )
