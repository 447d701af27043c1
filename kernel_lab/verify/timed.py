"""One side's timed calls, in its own process: the steps around each call, bound when the process starts, before any
cell loads (a cell that rebinds a module's names, ``time.perf_counter`` or ``torch.cuda.Event``, changes none of them).

Each call runs on inputs the judge made and handed over (:mod:`kernel_lab.verify.variation`). On a GPU it is queued
behind a cache flush and a short spin (:data:`COVER_CYCLES`), as ``triton.testing.do_bench`` queues its calls behind
its flush: the host launches the call meanwhile, so its CUDA-event time is the device's and not the host's launch of it;
its wall time (until the device is idle, less the flush and the spin) still shows work the events do not see. Threads
and child processes a call leaves running are waited for before its clock stops, and counted. The outputs go into the
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
Batch = Callable[[Run, list[tuple], list[list[torch.Tensor]], Callable[[], int]], tuple[dict[str, Any], list[Any]]]


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
    perf, sync = time.perf_counter, getattr(torch._C, "_cuda_synchronize", None)
    spin, zero, copy, event = torch.cuda._sleep, torch.Tensor.zero_, torch.Tensor.copy_, torch.cuda.Event
    elapsed = getattr(getattr(torch._C, "_CudaEventBase", None), "elapsed_time", None) or torch.cuda.Event.elapsed_time
    enumerate_threads, join, wait_pid = threading.enumerate, threading.Thread.join, os.waitpid
    empty = torch.empty

    def synchronize(device: torch.device) -> None:
        if device.type == "cuda" and sync is not None:
            sync()

    def settle(threads: set[int | None], procs: set[int]) -> tuple[bool, bool]:
        """Wait for what a call left running (threads, child processes): (any threads, any processes)."""
        stray = [t for t in enumerate_threads() if t.ident not in threads and t.is_alive()]
        for t in stray:
            join(t, 30)
        kids = children() - procs
        for pid in kids:
            with suppress(ChildProcessError):  # not a child of ours any more: gone
                wait_pid(pid, 0)
        return bool(stray), bool(kids)

    def batch(run: Run, calls: list[tuple], boxes: list[list[torch.Tensor]], own: Callable[[], int]) -> tuple[dict, list]:
        started = perf()
        device = next((v.device for v in calls[0] if isinstance(v, torch.Tensor)), torch.device("cpu"))
        flush = empty(FLUSH_BYTES.get(device.type, FLUSH_BYTES["cpu"]), dtype=torch.uint8, device=device)
        threads, procs = {t.ident for t in enumerate_threads()}, children()
        warming = perf()
        while device.type == "cuda" and (perf() - warming) * 1e3 < WARM_MS:  # at least once, not timed
            run(calls[0])
            synchronize(device)
        head: dict[str, Any] = {"events_ms": [], "walls_ms": [], "spans_ms": [], "own_launches": [], "mailed": []}
        head["counts"] = []
        head |= {"stray_threads": 0, "stray_processes": 0}
        sent: list[Any] = []
        for inputs, into in zip(calls, boxes):
            before, flushed = own(), perf()
            if device.type != "cuda":
                zero(flush)
            synchronize(device)
            t0 = perf()
            if device.type == "cuda":  # queued behind the flush and the spin: its launch is hidden
                flushing, start, end = (event(enable_timing=True) for _ in range(3))
                flushing.record()
                zero(flush)
                spin(COVER_CYCLES)
                start.record()
                out = run(inputs)
                end.record()
                synchronize(device)
                event_ms, flush_ms = elapsed(start, end), elapsed(flushing, start)
            else:
                out = run(inputs)
            threaded, forked = settle(threads, procs)
            synchronize(device)
            if device.type != "cuda":
                event_ms, flush_ms = (perf() - t0) * 1e3, 0.0
            head["walls_ms"].append((perf() - t0) * 1e3 - flush_ms)  # until idle, less the flush and the spin
            head["spans_ms"].append((perf() - flushed) * 1e3)  # the flush too: what the judge's own clock sees
            head["events_ms"].append(event_ms)
            head["own_launches"].append(own() - before)
            head["stray_threads"] += threaded
            head["stray_processes"] += forked
            outputs = leaves(out)
            head["counts"].append(len(outputs))
            mailed = [k for k, (t, box) in enumerate(zip(outputs, into)) if box.shape == t.shape and box.dtype == t.dtype]
            for k in mailed:
                copy(into[k], outputs[k])
            head["mailed"].append(mailed)
            sent += [t for k, t in enumerate(outputs) if k not in mailed]
            synchronize(device)
        head["batch_ms"] = (perf() - started) * 1e3
        return head, sent

    return batch
