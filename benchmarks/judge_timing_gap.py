"""Why the judge's times of a Triton cell run above the screen's and do_bench's: one cell, every way. (GPU.)

    python benchmarks/judge_timing_gap.py [CELL] [--fast 'BLOCK=16384, num_warps=8']

For the cell (default benchmarks/teaching/add_tiny_block.py) and one fast launch variant of it, the
median milliseconds of one call, measured (1) with ``triton.testing.do_bench`` here; (2) by the screen's
own code (:class:`kernel_lab.verify.screen_worker.Screening`) in this process; (3) by the judge's own
timing code (:meth:`kernel_lab.verify.sandbox.Sandbox.time`) in this process, as is (and at the commit
``--before`` names, side by side), without its output fingerprints, and with its inputs' per-call
variation left out, and the device time of the cell's kernel alone in that loop (torch's profiler: no host
launch time); (4) by the screen in its worker processes; (5) by the judge in its processes,
one candidate, then four. Where (3) matches (2) but (5) does not, the gap comes from around the judge's
processes, not from its timing loop.
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import statistics
import tempfile
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"  # the CPU only to try the script (Triton interpreted)


def variant(source: str, fast: str) -> str:
    """The cell with its launch's BLOCK and num_warps set as ``fast`` says (its grid follows BLOCK)."""
    block = int(re.search(r"BLOCK=(\d+)", fast).group(1))  # type: ignore[union-attr]
    warps = int(re.search(r"num_warps=(\d+)", fast).group(1))  # type: ignore[union-attr]
    out = re.sub(r"BLOCK=\d+", f"BLOCK={block}", source)
    out = re.sub(r"cdiv\((.*?), \d+\)", rf"cdiv(\1, {block})", out)
    return re.sub(r"num_warps=\d+", f"num_warps={warps}", out)


def judged(cls: type, path: Path, inputs: tuple) -> float:
    """The median of 100 calls timed by ``cls.time`` (a Sandbox class) on ``inputs``, after 10 to warm."""
    box = cls("candidate", DEVICE)
    box.load(str(path))
    box.inputs[0] = inputs
    box.time([0], 10, secret=1)
    return statistics.median(box.time([0], 100, secret=2)[0]["events_ms"])


def kernel_ms(path: Path, inputs: tuple) -> float:
    """The median device time (ms) of one launch of the cell's own kernels in the judge's loop (torch's profiler):
    the kernel alone, without what the host spends launching it, which the loop's CUDA events include."""
    from kernel_lab.cells import kernel_names
    from kernel_lab.verify.sandbox import Sandbox, _device_time

    names = kernel_names(path.read_text())
    box = Sandbox("candidate", DEVICE)
    box.load(str(path))
    box.inputs[0] = inputs
    box.time([0], 10, secret=1)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        box.time([0], 100, secret=2)
    own = [_device_time(e) for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA and e.name in names]
    return statistics.median(own) / 1e3 if own else float("nan")


def in_process(paths: dict[str, Path], before: Path | None) -> None:
    """(1)-(3): do_bench, the screen's loop and the judge's loop (and the judge's loop of ``before``: a copy
    of kernel_lab at another commit, its sandbox module loaded beside this one), all in this process."""
    from triton.testing import do_bench

    from kernel_lab.verify import sandbox
    from kernel_lab.verify.sandbox import Sandbox
    from kernel_lab.verify.screen_worker import Screening

    boxes: dict[str, type] = {"judge loop": Sandbox}
    if before is not None:
        spec = importlib.util.spec_from_file_location("sandbox_before", before / "kernel_lab/verify/sandbox.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        boxes = {"judge loop before": module.Sandbox, **boxes}

    screening = Screening(DEVICE)
    screening.load(str(paths["original"]), seed=1)
    inputs = screening.inputs
    for name, path in paths.items():
        screening.prepare(7 if name == "fast" else 8, str(path), None, None)
    ids = {"original": 8, "fast": 7}
    for name, path in paths.items():
        cell = screening.variants[ids[name]]
        bench = do_bench(lambda cell=cell: cell.run(inputs), warmup=25, rep=200) if DEVICE == "cuda" else float("nan")
        screened = screening.time(ids[name], budget_ms=500, most=200)["ms"]
        varied = {label: judged(cls, path, inputs) for label, cls in boxes.items()}
        fingerprint = sandbox._fingerprint
        sandbox._fingerprint = lambda outputs, secret: torch.zeros(6, dtype=torch.float64)  # no GPU work after a call
        try:
            varied["judge loop, no fingerprints"] = judged(Sandbox, path, inputs)
            varied["its kernel alone, no fingerprints"] = kernel_ms(path, inputs) if DEVICE == "cuda" else float("nan")
        finally:
            sandbox._fingerprint = fingerprint
        if DEVICE == "cuda":
            varied["its kernel alone, with fingerprints"] = kernel_ms(path, inputs)
        fixed = tuple(t.to(torch.int32) if t.is_floating_point() else t for t in inputs)  # no per-call variation
        try:
            same = judged(Sandbox, path, fixed)
        except Exception as exc:  # noqa: BLE001 - a cell that needs floating inputs
            same = float("nan")
            print(f"  (integer inputs refused: {exc})")
        loops = " | ".join(f"{label} {ms:.3f} ms" for label, ms in varied.items())
        print(
            f"{name:9s} do_bench {bench:.3f} ms | screen loop {screened:.3f} ms | {loops}"
            f" (judge loop on integer inputs, no variation: {same:.3f} ms)  [in this process]"
        )


def in_processes(sources: dict[str, str]) -> None:
    """(4)-(5): the screen's and the judge's own processes."""
    from kernel_lab.verify.judge import Judge
    from kernel_lab.verify.screen import Screener

    with Screener(sources["original"], device=DEVICE) as screen:
        original, (fast,) = screen.screen([sources["fast"]])
        print(f"screen processes: original {original.ms:.3f} ms, fast {fast.ms:.3f} ms")
    with Judge(sources["original"], device=DEVICE) as judge:
        judge.start()
        for n in (1, 4, 1):
            began = time.monotonic()
            verdicts = judge.check_many([sources["fast"]] * n)
            shown = [
                f"{v.timing.reference_ms:.3f}/{v.timing.candidate_ms:.3f} ms (iqr {v.timing.candidate_spread:.3f})"
                if v.timing
                else v.reason
                for v in verdicts
            ]
            print(f"judge processes, {n} candidate(s) in {time.monotonic() - began:.1f} s: original/fast {', '.join(shown)}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("cell", nargs="?", default=str(ROOT / "teaching" / "add_tiny_block.py"))
    parser.add_argument("--fast", default="BLOCK=16384, num_warps=8")
    parser.add_argument("--before", type=Path, help="a copy of the repository at another commit (its kernel_lab/)")
    args = parser.parse_args()
    original = Path(args.cell).read_text()
    sources = {"original": original, "fast": variant(original, args.fast)}
    folder = Path(tempfile.mkdtemp(prefix="timing_gap_"))
    paths = {name: folder / f"{name}.py" for name in sources}
    for name, path in paths.items():
        path.write_text(sources[name])
    print(f"{Path(args.cell).stem}, fast variant: {args.fast}; {torch.cuda.get_device_name() if DEVICE == 'cuda' else DEVICE}")
    in_processes(sources)
    in_process(paths, args.before)


if __name__ == "__main__":
    main()
