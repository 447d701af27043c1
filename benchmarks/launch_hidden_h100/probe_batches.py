"""Is a judge batch's first call slow because the process waited (slept) before it? One cell, in process. (GPU)

python probe_batches.py CELL      (call 5)
"""

import sys
import time
from pathlib import Path

from kernel_lab.verify.sandbox import Sandbox
from kernel_lab.verify.verdict import quartiles

path = sys.argv[1]
box = Sandbox("candidate", "cuda")
box.load(path)
namespace: dict = {}
exec(compile(Path(path).read_text(), path, "exec"), namespace)  # noqa: S102 - the benchmark's own cells
box.inputs[0] = namespace["make_inputs"](*namespace.get("SHAPES", [()])[0])
box.time([0], 20, secret=1)


def show(label: str, events: list[float], walls: list[float]) -> None:
    e, w = (" ".join(f"{x:.4f}" for x in quartiles(v)) for v in (events, walls))
    print(f"{label:40s} events q {e}  walls q {w}", flush=True)


for _ in range(2):
    header = box.time([0], 100, secret=2)[0]
    show("one batch of 100", header["events_ms"], header["walls_ms"])
    for gap in (0.005, 0.05):
        events, walls, first, rest = [], [], [], []
        for i in range(20):
            time.sleep(gap)
            header = box.time([0], 5, secret=3 + i)[0]
            events += header["events_ms"]
            walls += header["walls_ms"]
            first.append(header["events_ms"][0])
            rest += header["events_ms"][1:]
        show(f"20 batches of 5, {gap * 1e3:.0f} ms asleep before each", events, walls)
        show("   their first calls", first, first)
        show("   the other calls", rest, rest)
