"""``%%profile`` in the profiled kernel (in place) against a plain kernel (a fresh process under ncu) and a
naive ``ncu --set full python cell.py``; and what the profiled kernel costs cells it does not profile (#13).

    python benchmarks/live_latency.py [CELL.py] [--repeats 3]

Run on a GPU machine with ncu and Jupyter's kernel parts (jupyter_client, ipykernel). Two real IPython
kernels are started through jupyter_client: "Python 3 (Kernel Lab, profiled)" (its kernelspec installed
into a temporary prefix) and the plain one. In each, the cell is run once (its kernel compiled), then:

* launches that are not profiled (first): the cell's ``run`` on its inputs called 1,000 times between two
  synchronizations, per call, in both kernels: on its declared inputs and on 4 K elements (launch cost
  alone), after 20 calls of warm-up;
* time to hints: ``%%profile`` on the cell, from the execute request to the reply (the diagnosis and its
  display made), ``--repeats`` times, alternating with the naive command line.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from profile_latency import naive_once

from kernel_lab import samples
from kernel_lab.profiling import live

CALLS = """
import time, torch
def _per_call(inputs, calls=1000):
    for _ in range(20):
        run(*inputs)
    torch.cuda.synchronize(); t = time.perf_counter()
    for _ in range(calls):
        run(*inputs)
    torch.cuda.synchronize()
    return (time.perf_counter() - t) / calls * 1e6
_big = make_inputs()
_small = tuple(v[:4096] if hasattr(v, "numel") else v for v in _big)
print(f"PER_CALL {_per_call(_big):.2f} {_per_call(_small):.2f}")
"""


class Kernel:
    """A real IPython kernel, started through jupyter_client."""

    def __init__(self, name: str) -> None:
        from jupyter_client.manager import start_new_kernel

        started = time.perf_counter()
        self.manager, self.client = start_new_kernel(kernel_name=name, startup_timeout=300)
        self.start_s = time.perf_counter() - started

    def run(self, code: str) -> tuple[float, str]:
        """(seconds from the execute request to the reply, the text it printed or displayed)."""
        out: list[str] = []
        errors: list[str] = []

        def hook(msg: dict[str, Any]) -> None:
            content = msg["content"]
            if msg["msg_type"] == "stream":
                out.append(content["text"])
            elif msg["msg_type"] in ("display_data", "execute_result"):
                out.append(content["data"].get("text/plain", "")[:500])
            elif msg["msg_type"] == "error":
                errors.append("\n".join(content["traceback"]))

        started = time.perf_counter()
        reply = self.client.execute_interactive(code, timeout=600, output_hook=hook)
        took = time.perf_counter() - started
        text = "".join(out)
        if reply["content"]["status"] != "ok":
            c = reply["content"]
            raise SystemExit(
                f"the cell failed in the kernel ({c.get('status')}: {c.get('ename')}: {c.get('evalue')}):\n"
                f"{''.join(errors)[-3000:] or ''.join(c.get('traceback', []))[-3000:]}\noutput:\n{text[-1500:]}"
            )
        return took, text

    def close(self) -> None:
        self.client.stop_channels()
        self.manager.shutdown_kernel(now=True)


def per_call(kernel: Kernel) -> tuple[float, float]:
    _, text = kernel.run(CALLS)
    found = re.search(r"PER_CALL ([\d.]+) ([\d.]+)", text)
    assert found, text
    return float(found[1]), float(found[2])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("cell", nargs="?", type=Path, default=samples.cell("memory_bound"))
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    cell = args.cell.read_text()
    with tempfile.TemporaryDirectory() as tmp:
        live.install(user=False, prefix=tmp)
        os.environ["JUPYTER_PATH"] = str(Path(tmp) / "share" / "jupyter")
        profiled, plain = Kernel(live.KERNEL_NAME), Kernel("python3")
        print(f"kernel start: profiled {profiled.start_s:.1f} s, plain {plain.start_s:.1f} s", flush=True)
        try:
            for kernel in (profiled, plain):
                kernel.run("%load_ext kernel_lab")
                kernel.run(cell)
            calls = {name: per_call(k) for name, k in (("profiled", profiled), ("plain", plain))}
            (pb, ps), (qb, qs) = calls["profiled"], calls["plain"]
            print(f"unprofiled calls of run, declared inputs: {pb:.1f} us profiled kernel vs {qb:.1f} us plain ({pb / qb:.2f}x)")
            print(f"unprofiled calls of run, 4 K elements:    {ps:.1f} us profiled kernel vs {qs:.1f} us plain ({ps / qs:.2f}x)")
            in_place, fresh, naive = [], [], []
            for i in range(args.repeats):
                took, text = profiled.run("%%profile\n" + cell)
                in_place.append(took)
                mode = next((line for line in text.splitlines() if "kernel" in line.lower()), "")[:140]
                fresh.append(plain.run("%%profile\n" + cell)[0])
                naive.append(naive_once(args.cell, Path(tmp))[0])
                print(
                    f"repeat {i}: in place {in_place[-1]:.2f} s, fresh process {fresh[-1]:.2f} s, naive "
                    f"{naive[-1]:.2f} s  [{mode}]",
                    flush=True,
                )
        finally:
            profiled.close()
            plain.close()
    m = {name: statistics.median(v) for name, v in (("in place", in_place), ("fresh", fresh), ("naive", naive))}
    print(f"\ncell: {args.cell.name}; medians of {args.repeats}")
    print(f"%%profile in the profiled kernel (in place): {m['in place']:.2f} s  ({m['in place'] / m['naive']:.2f}x naive)")
    print(f"%%profile in a plain kernel (fresh process): {m['fresh']:.2f} s  ({m['fresh'] / m['naive']:.2f}x naive)")
    print(f"naive ncu --set full python cell.py:        {m['naive']:.2f} s")


if __name__ == "__main__":
    main()
