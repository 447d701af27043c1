"""One side's timed calls, in its own process: the steps around each call, bound when the process starts, before any
cell loads (a cell that rebinds a module's names, ``time.perf_counter`` or ``torch.cuda.Event``, changes none of them).

Each call runs on inputs the judge made and handed over (:mod:`kernel_lab.verify.variation`). On a GPU it is queued
behind a cache flush and a short spin (:data:`COVER_CYCLES`), as ``triton.testing.do_bench`` queues its calls behind
its flush: the host launches the call meanwhile, so its CUDA-event time is the device's and not the host's launch of it;
its wall time (until the device is idle, less the flush and the spin) still shows work the events do not see. Threads
and child processes a call leaves running are waited for before its clock stops, and counted; where there are none,
the time the judge took to look for them (reading ``/proc``) is not the call's. The outputs go into the
judge's buffers (a GPU) or back through the pipe (the CPU): the judge fingerprints them itself. None of what decides
a verdict is computed here alone: the judge bounds every batch with its own clock, and compares each side's time
outside its calls with the reference's.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path
from typing import Any

import torch

#: GPU clock cycles of a spin after each timed call's cache flush (~0.3 ms on an H100): the host launches the call
#: meanwhile, however slow it is (the judge's processes launched a 0.057 ms kernel in up to 0.25 ms, and the event
#: times of one cell spread over 1.5x; with the spin, over 2%: benchmarks/launch_hidden_h100/)
COVER_CYCLES = 600_000
#: untimed calls that start each batch on a GPU (at least one): a process that waited for its turn launches its first
#: calls slowly (rowsum_tiny on the H100, a 0.057 ms kernel: 0.12-0.15 ms after 50 ms asleep)
WARM_MS = 0.5
FLUSH_BYTES = {"cuda": 256 << 20, "cpu": 32 << 20}  # larger than the H100's 50 MB L2

Run = Callable[[tuple], Any]
Batch = Callable[[Run, list[tuple], list[list[torch.Tensor]], Callable[[], int], bool], tuple[dict[str, Any], list[Any]]]


def children() -> set[int]:
    """This process's child processes alive now (Linux: /proc; elsewhere none are seen)."""
    found: set[int] = set()
    for task in Path("/proc/self/task").glob("*"):
        try:
            found |= {int(p) for p in (task / "children").read_text().split()}
        except (OSError, ValueError):
            continue
    return found


def batch_timer(leaves: Callable[[Any], list[torch.Tensor]]) -> Batch:
    """The batch of timed calls, with every step it takes bound now (see the module docstring). ``leaves``: a result's
    tensors."""
    perf, sync, empty = time.perf_counter, getattr(torch._C, "_cuda_synchronize", None), torch.empty
    elapsed = getattr(getattr(torch._C, "_CudaEventBase", None), "elapsed_time", None) or torch.cuda.Event.elapsed_time
    enumerate_threads, alive_children = threading.enumerate, children
    synchronize = _synchronizer(sync)
    settle = _settler(enumerate_threads, threading.Thread.join, os.waitpid, alive_children)
    one = _one_call(perf, torch.Tensor.zero_, torch.cuda._sleep, torch.cuda.Event, elapsed, synchronize)
    mail = _mailer(torch.Tensor.copy_)
    warm = _warmer(perf, torch.Tensor.clone, synchronize)

    def batch(
        run: Run, calls: list[tuple], boxes: list[list[torch.Tensor]], own: Callable[[], int], written: bool
    ) -> tuple[dict, list]:
        started = perf()
        device = next((v.device for v in calls[0] if isinstance(v, torch.Tensor)), torch.device("cpu"))
        flush = empty(FLUSH_BYTES.get(device.type, FLUSH_BYTES["cpu"]), dtype=torch.uint8, device=device)
        threads, procs = {t.ident for t in enumerate_threads()}, alive_children()
        if device.type == "cuda":
            warm(run, calls[0], device, written)
        head: dict[str, Any] = {"events_ms": [], "walls_ms": [], "spans_ms": [], "own_launches": [], "mailed": []}
        head |= {"counts": [], "stray_threads": 0, "stray_processes": 0}
        sent: list[Any] = []
        for inputs, into in zip(calls, boxes):
            before, flushed = own(), perf()
            out, t0, event_ms, flush_ms = one(run, inputs, device, flush)
            looking = perf()
            threaded, forked = settle(threads, procs)
            looked_ms = 0.0 if threaded or forked else (perf() - looking) * 1e3  # the judge's own look, found nothing
            synchronize(device)
            wall_ms = (perf() - t0) * 1e3 - looked_ms
            event_ms = wall_ms if event_ms is None else event_ms  # off a GPU: its wall time
            head["walls_ms"].append(wall_ms - flush_ms)  # until idle, less the flush, the spin and the judge's look
            head["spans_ms"].append((perf() - flushed) * 1e3)  # the flush too: what the judge's own clock sees
            head["events_ms"].append(event_ms)
            head["own_launches"].append(own() - before)
            head["stray_threads"] += threaded
            head["stray_processes"] += forked
            sent += mail(leaves(out), into, head)
            synchronize(device)
        head["batch_ms"] = (perf() - started) * 1e3
        return head, sent

    return batch


def _warmer(
    perf: Callable[[], float], clone: Callable[[torch.Tensor], torch.Tensor], synchronize: Callable[[torch.device], None]
) -> Callable[[Run, tuple, torch.device, bool], int]:
    def warm(run: Run, inputs: tuple, device: torch.device, written: bool) -> int:
        """Untimed calls for :data:`WARM_MS` (at least one), on a copy of ``inputs`` where the cell writes its inputs
        in place (``written``): a call timed after them gets its inputs as the judge made them. (Liger's SwiGLU
        backward was refused on the H200 at stop 49 as right only when checked; read from this code, the untimed calls
        rewrote its first timed call's inputs a number of times that a clock, not a count, decides on each side.) The
        number of calls."""
        args = tuple(clone(v) if written and isinstance(v, torch.Tensor) else v for v in inputs)
        calls, warming = 0, perf()
        while not calls or (perf() - warming) * 1e3 < WARM_MS:
            run(args)
            synchronize(device)
            calls += 1
        return calls

    return warm


def _synchronizer(sync: Callable[[], None] | None) -> Callable[[torch.device], None]:
    def synchronize(device: torch.device) -> None:
        if device.type == "cuda" and sync is not None:
            sync()

    return synchronize


def _settler(
    enumerate_threads: Callable[[], list[threading.Thread]],
    join: Callable[[threading.Thread, float], None],
    wait_pid: Callable[[int, int], Any],
    alive_children: Callable[[], set[int]],
) -> Callable[[set[int | None], set[int]], tuple[bool, bool]]:
    def settle(threads: set[int | None], procs: set[int]) -> tuple[bool, bool]:
        """Wait for what a call left running (threads, child processes): (any threads, any processes)."""
        stray = [t for t in enumerate_threads() if t.ident not in threads and t.is_alive()]
        for t in stray:
            join(t, 30)
        kids = alive_children() - procs
        for pid in kids:
            with suppress(ChildProcessError):  # not a child of ours any more: gone
                wait_pid(pid, 0)
        return bool(stray), bool(kids)

    return settle


def _one_call(
    perf: Callable[[], float],
    zero: Callable[[torch.Tensor], Any],
    spin: Callable[[int], None],
    event: type[torch.cuda.Event],
    elapsed: Callable[[Any, Any], float],
    synchronize: Callable[[torch.device], None],
) -> Callable[[Run, tuple, torch.device, torch.Tensor], tuple[Any, float, float | None, float]]:
    def one(run: Run, inputs: tuple, device: torch.device, flush: torch.Tensor) -> tuple[Any, float, float | None, float]:
        """One call after the cache flush: (its output, when its clock started, its CUDA-event ms or None off a GPU,
        the flush's and the spin's ms). On a GPU it is queued behind the flush and the spin: its launch is hidden."""
        if device.type != "cuda":
            zero(flush)
        synchronize(device)
        t0 = perf()
        if device.type != "cuda":
            return run(inputs), t0, None, 0.0
        flushing, start, end = (event(enable_timing=True) for _ in range(3))
        flushing.record()
        zero(flush)
        spin(COVER_CYCLES)
        start.record()
        out = run(inputs)
        end.record()
        synchronize(device)
        return out, t0, elapsed(start, end), elapsed(flushing, start)

    return one


def _mailer(copy: Callable[[torch.Tensor, torch.Tensor], Any]) -> Callable[[list[torch.Tensor], list[torch.Tensor], dict], list]:
    def mail(outputs: list[torch.Tensor], into: list[torch.Tensor], head: dict[str, Any]) -> list[torch.Tensor]:
        """Outputs into the judge's buffers where one fits (their positions in ``head``); the others, to send."""
        head["counts"].append(len(outputs))
        mailed = [k for k, (t, box) in enumerate(zip(outputs, into)) if box.shape == t.shape and box.dtype == t.dtype]
        for k in mailed:
            copy(into[k], outputs[k])
        head["mailed"].append(mailed)
        return [t for k, t in enumerate(outputs) if k not in mailed]

    return mail
