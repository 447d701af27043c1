"""How long the judge's other threads cannot run Python while a large tensor crosses a candidate's pipe.

    python benchmarks/pipe_stall.py [--gib 1] [--repeats 3]

A thread sends a float32 tensor of ``--gib`` GiB through ``kernel_lab.verify.protocol`` (as a candidate's process
sends an input it wrote in place) while this thread receives it and a third thread ticks every millisecond; prints
the longest gap between two ticks, each repeat. Stop 52 on the H200: the parent of Liger's cross entropy's judge
stood still 35 s in all, in stalls of 0.3–2 s, while its checks ran.
"""

from __future__ import annotations

import argparse
import itertools
import threading
import time

import torch

from kernel_lab.verify import protocol


def longest_stall(gib: float) -> float:
    """Seconds of the longest stretch without a tick while ``gib`` GiB are received."""
    read, write = protocol.pipe()
    sent = torch.randn(int(gib * (1 << 28)))
    writer = threading.Thread(target=protocol.send, args=(write, {}, [sent]))
    ticks: list[float] = []
    stop = threading.Event()

    def tick() -> None:
        while not stop.is_set():
            ticks.append(time.perf_counter())
            time.sleep(0.001)

    ticker = threading.Thread(target=tick)
    ticker.start()
    writer.start()
    _, got = protocol.receive(read)
    stop.set()
    ticker.join()
    writer.join()
    assert torch.equal(got[0], sent), "the tensor did not arrive as sent"
    return max(b - a for a, b in itertools.pairwise(ticks))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gib", type=float, default=1.0)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    for k in range(args.repeats):
        print(f"repeat {k + 1}: longest stall {longest_stall(args.gib) * 1e3:.1f} ms receiving {args.gib:g} GiB")


if __name__ == "__main__":
    main()
