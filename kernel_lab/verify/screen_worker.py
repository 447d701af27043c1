"""The screening process: launch-parameter variants of one cell, each checked and timed on one input.

    python -m kernel_lab.verify.screen_worker screen --requests FD --replies FD [--device DEV]

Requests (:mod:`kernel_lab.verify.protocol`): ``load`` the original cell and make the screening input (the
declared shape whose inputs hold the most bytes, the judge's headline; a seed from the parent) and the expected
outputs; ``prepare`` a variant (load it, compile it by running it once, compare its outputs with the original's);
``time`` a prepared variant (or the original, id -1): the median of calls on the same input, caches flushed before
each, on the device's clock. Only variants that :func:`kernel_lab.verify.screen.parameter_only` accepts are sent
here; the full judge still decides about the finalists.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

_perf = time.perf_counter

import torch  # noqa: E402 - after the clock is taken

from kernel_lab import interpreter  # noqa: E402
from kernel_lab.cells import describe  # noqa: E402
from kernel_lab.verify import protocol  # noqa: E402
from kernel_lab.verify.compare import compare, tolerance, uses_tf32  # noqa: E402
from kernel_lab.verify.sandbox import (  # noqa: E402
    Cell,
    Fail,
    Sandbox,
    clone,
    device_of,
    failure_kind,
    leaves,
    synchronize,
    warm_triton,
)
from kernel_lab.verify.timed import FLUSH_BYTES  # noqa: E402


class Screening:
    """The original cell, its screening input and expected outputs, and the variants prepared so far."""

    def __init__(self, device: str | None) -> None:
        self.box = Sandbox(device)
        self.variants: dict[int, Cell] = {}
        self.inputs: tuple = ()
        self.expected: list[torch.Tensor] = []
        self.tf32 = False

    def load(self, path: str, seed: int) -> dict[str, Any]:
        """Load the original, make the screening input and the expected outputs; ``took``: seconds per step."""
        took, began = {}, _perf()

        def step(name: str) -> None:
            nonlocal began
            took[name], began = _perf() - began, _perf()

        if torch.cuda.is_available():
            torch.cuda.init()
        step("cuda")
        info = self.box.load(path)
        step("cell")
        shape = self.box.heaviest(info["shapes"], seed)  # the judge's headline shape
        (header, _), *_ = self.box.make([{"id": 0, "seed": seed, "shape": shape, "variant": "", "timing": True}])
        if "error" in header:
            raise Fail(header["error"])
        step("inputs and first call")
        self.inputs = self.box.inputs[0]
        self.box.launches.clear()
        self.expected = leaves(self.box.cell.run(clone(self.inputs)))  # type: ignore[union-attr]
        synchronize(device_of(self.inputs))
        self.box.sizes.update(t.nbytes for t in self.expected)  # what a variant's outputs take is poisoned too
        step("second call")
        self.tf32 = uses_tf32(Path(path).read_text())
        launched: dict[str, dict[str, int]] = {}
        for launch in self.box.launches:  # each kernel's first launch: what computed knobs and autotuners chose
            launched.setdefault(launch.kernel, {name: v for name, v in launch.args if type(v) is int})
        reply = {"shape": shape, "device_name": info["device_name"], "took": took, "launched": launched}
        return reply | self._memory()

    def _memory(self) -> dict[str, int]:
        """What this process will hold once it times (what it holds now, a cache flush and a copy of the input), and
        the memory of the device it holds it on (the machine's on the CPU)."""
        device = device_of(self.inputs)
        copy = sum(t.nbytes for t in leaves(self.inputs))
        if device.type == "cuda":
            held = torch.cuda.memory_reserved(device) + FLUSH_BYTES["cuda"] + copy
            return {"held": held, "memory": torch.cuda.mem_get_info(device)[1]}
        now = copy + sum(t.nbytes for t in self.expected)
        return {"held": now + copy + FLUSH_BYTES["cpu"], "memory": os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")}

    def prepare(self, id: int, path: str, rtol: float | None, atol: float | None) -> dict[str, Any]:
        """Load a variant, run it once (Triton compiles it), and compare with the original's outputs."""
        started = _perf()
        cell = Cell(Path(path))
        self.box.poison_for(self.inputs)  # unwritten outputs read as NaN
        got = leaves(cell.run(clone(self.inputs)))
        synchronize(device_of(self.inputs))
        if len(got) != len(self.expected):
            raise Fail(f"returned {len(got)} outputs, the original {len(self.expected)}", "wrong_shape")
        for i, (g, want) in enumerate(zip(got, self.expected)):
            if g.shape != want.shape or g.dtype != want.dtype:
                raise Fail(
                    f"output {i} is {g.dtype} {tuple(g.shape)}, the original's {want.dtype} {tuple(want.shape)}", "wrong_shape"
                )
            r, a = tolerance(want.dtype, self.tf32, rtol, atol)
            wrong, _ = compare(g, want, r, a)  # on the device: seconds on the CPU for large outputs
            if wrong:
                raise Fail(f"output {i}: {wrong.text}", wrong.kind)
        self.variants[id] = cell
        return {"id": id, "first_ms": (_perf() - started) * 1e3}

    def time(self, id: int, budget_ms: float, most: int, warm_ms: float = 0.0) -> dict[str, Any]:
        """The median time of one call (milliseconds) over calls that fit in ``budget_ms`` (3 to ``most``), after
        ``warm_ms`` of calls not timed (a GPU that was idle runs its first milliseconds at lower clocks).

        On a GPU each call is queued behind its cache flush, as ``triton.testing.do_bench`` does: the host launches
        it while the flush runs, so the device's clock sees the kernels and not the launch from Python, which would
        add tens of microseconds to every call and drown the differences between the configurations of a short
        kernel. How many calls fit is estimated from a first call (flush and wait included), which is not timed."""
        cell = self.variants[id] if id >= 0 else self.box.cell
        assert cell is not None
        device = device_of(self.inputs)
        buffers = clone(self.inputs)
        flush = torch.empty(FLUSH_BYTES.get(device.type, FLUSH_BYTES["cpu"]), dtype=torch.uint8, device=device)
        warming = _perf()
        while (_perf() - warming) * 1e3 < warm_ms:
            flush.zero_()
            cell.run(buffers)
            synchronize(device)
        self.box.launches.clear()
        if device.type != "cuda":
            samples: list[float] = []
            began = _perf()
            while len(samples) < most and (len(samples) < 3 or (_perf() - began) * 1e3 < budget_ms):
                flush.zero_()
                t0 = _perf()
                cell.run(buffers)
                samples.append((_perf() - t0) * 1e3)
            return {"id": id, "ms": statistics.median(samples), "calls": len(samples)}
        t0 = _perf()
        self._queued(cell, buffers, flush)  # not timed: the process waited for its turn, its first launch is slow
        synchronize(device)
        calls = max(3, min(most, int(budget_ms / ((_perf() - t0) * 1e3))))
        timed = [self._queued(cell, buffers, flush) for _ in range(calls)]
        synchronize(device)
        return {"id": id, "ms": statistics.median(start.elapsed_time(end) for start, end in timed), "calls": calls}

    @staticmethod
    def _queued(cell: Cell, buffers: tuple, flush: torch.Tensor) -> tuple[torch.cuda.Event, torch.cuda.Event]:
        """Queue a cache flush and one call between two events, without waiting for them."""
        flush.zero_()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        cell.run(buffers)
        end.record()
        return start, end


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m kernel_lab.verify.screen_worker")
    parser.add_argument("who", choices=("screen",))
    parser.add_argument("--requests", type=int, required=True)
    parser.add_argument("--replies", type=int, required=True)
    parser.add_argument("--device", default=None)
    args = parser.parse_args(argv)
    if not torch.cuda.is_available():
        os.environ.setdefault("TRITON_INTERPRET", "1")
        interpreter.install()
    else:
        warm_triton()  # while the process waits for its cell (it was started ahead)
    screening = Screening(args.device)
    handlers: dict[str, Callable[..., dict[str, Any]]] = {
        "load": screening.load,
        "prepare": screening.prepare,
        "time": screening.time,
    }
    # a variant that breaks is an answer, not the end of the screen
    return protocol.serve(
        args.requests,
        args.replies,
        handlers,
        lambda exc: exc.header() if isinstance(exc, Fail) else {"error": describe(exc, "the cell"), "kind": failure_kind(exc)},
    )


if __name__ == "__main__":
    sys.exit(main())
