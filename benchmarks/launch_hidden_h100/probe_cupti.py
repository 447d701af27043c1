"""Does recording a cell's kernels (torch's profiler, CUPTI) slow the judge's later timed calls in that process? (GPU)

python probe_cupti.py CELL        (call 3; with TEARDOWN_CUPTI=1 and without)
"""

import os
import statistics
import sys
import time
from pathlib import Path

import torch

from kernel_lab.verify.sandbox import Sandbox, synchronize, warm_up

path = sys.argv[1]
box = Sandbox("candidate", "cuda")
box.load(path)
namespace: dict = {}
exec(compile(Path(path).read_text(), path, "exec"), namespace)  # noqa: S102 - the benchmark's own cells
box.inputs[0] = namespace["make_inputs"](*namespace.get("SHAPES", [()])[0])
device = torch.device("cuda")


def host_ms() -> float:
    """The median time the host takes to launch one call (the GPU idle before it)."""
    took = []
    for _ in range(50):
        synchronize(device)
        t0 = time.perf_counter()
        box.cell.run(box.inputs[0])  # type: ignore[union-attr]
        took.append((time.perf_counter() - t0) * 1e3)
    synchronize(device)
    return statistics.median(took)


def measure(label: str) -> None:
    box.time([0], 10, secret=1)
    header = box.time([0], 100, secret=2)[0]
    events, walls = statistics.median(header["events_ms"]), statistics.median(header["walls_ms"])
    print(
        f"{os.path.basename(path)} TEARDOWN_CUPTI={os.environ.get('TEARDOWN_CUPTI')} {label:22s} events {events:.4f} "
        f"walls {walls:.4f} host launch {host_ms():.4f} ms",
        flush=True,
    )


measure("fresh")
warm_up()
measure("after warm_up (CPU)")
box.observe(0)
measure("after observe (CUDA)")
box.observe(0)
measure("after observe twice")
