"""Run every corpus cell on the CPU in Triton's interpreter and compare run() with torch_run().

Usage (from the repository root):
    python3 tests/cells/corpus/check.py [NAME ...] [--write] [--timeout SECONDS]

Each cell runs in its own process (TRITON_INTERPRET=1, no GPU), loaded from its real file so that Triton can read
the kernels' source. For every SHAPES entry it calls torch_run(*inputs) and run(*inputs) on the same fresh inputs
and compares the two with torch.testing.assert_close. It prints one line per cell; --write stores the verdict
("ok" or the interpreter's error in one line) as the "cpu" field of index.json.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

HERE = Path(__file__).resolve().parent
INDEX = HERE / "index.json"
WIDTH = 100
NAME_WIDTH = 34

#: (rtol, atol) by output dtype name; integer and boolean outputs must match exactly
TOLERANCES = {
    "float32": (1e-4, 1e-4),
    "float16": (1e-2, 1e-2),
    "bfloat16": (2e-2, 2e-2),
    "float8_e4m3fn": (0.13, 0.02),
}


def _compare(actual, expected) -> None:
    """assert_close over nested tuples/lists with tolerances chosen by the expected output's dtype."""
    import torch

    if isinstance(expected, (tuple, list)):
        if not isinstance(actual, (tuple, list)) or len(actual) != len(expected):
            raise AssertionError(f"run() gave {type(actual).__name__}, torch_run() {len(expected)} outputs")
        for a, e in zip(actual, expected):
            _compare(a, e)
        return
    rtol, atol = TOLERANCES.get(str(expected.dtype).removeprefix("torch."), (0.0, 0.0))
    if expected.dtype.is_floating_point and expected.dtype.itemsize == 1:
        actual, expected = actual.float(), expected.float()
    torch.testing.assert_close(actual, expected, rtol=rtol, atol=atol)


def _one_line(error: BaseException) -> str:
    """The error as one line: its type and the first line of its message."""
    text = str(error).strip().splitlines()
    first = next((line.strip() for line in text if line.strip()), "")
    return f"{type(error).__name__}: {first}" if first else type(error).__name__


def check_cell(path: Path) -> str:
    """'ok', or what went wrong first, in one line (runs in the child process)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"corpus_{path.stem}", path)
    if spec is None or spec.loader is None:
        return f"cannot load {path.name}"
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as error:  # noqa: BLE001 - any error of a cell is its verdict
        return f"import failed: {_one_line(error)}"
    for shape in getattr(module, "SHAPES", [()]):
        inputs = module.make_inputs(*shape)
        try:
            expected = module.torch_run(*[x.clone() if hasattr(x, "clone") else x for x in inputs])
        except Exception as error:  # noqa: BLE001 - any error of a cell is its verdict
            return f"torch_run{shape} failed: {_one_line(error)}"
        try:
            actual = module.run(*inputs)
        except Exception as error:  # noqa: BLE001 - any error of a cell is its verdict
            return _one_line(error)
        try:
            _compare(actual, expected)
        except AssertionError as error:
            return f"mismatch at {shape}: " + " ".join(str(error).split())
    return "ok"


def _child(name: str, shims: bool) -> None:
    if shims:
        from kernel_lab import interpreter

        interpreter.install()
    print(json.dumps({"name": name, "cpu": check_cell(HERE / f"{name}.py")}))


def _run_child(name: str, timeout: float, shims: bool) -> str:
    env = {**os.environ, "TRITON_INTERPRET": "1", "CUDA_VISIBLE_DEVICES": ""}
    command = [sys.executable, __file__, "--child", name] + ["--kernel-lab"] * shims
    try:
        proc = subprocess.run(command, check=False, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return f"timed out after {timeout:.0f} s"
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith("{"):
            return json.loads(line)["cpu"]
    tail = [line for line in proc.stderr.splitlines() if line.strip()]
    return f"crashed (exit {proc.returncode}): {tail[-1].strip() if tail else 'no output'}"


def _row(name: str, verdict: str) -> str:
    lines = textwrap.wrap(verdict, WIDTH - NAME_WIDTH - 1) or [""]
    return "\n".join(f"{name if i == 0 else '':<{NAME_WIDTH}} {text}" for i, text in enumerate(lines))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="cells to check (default: every cell in index.json)")
    parser.add_argument("--write", action="store_true", help="store each verdict as 'cpu' in index.json")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per cell (default 300)")
    parser.add_argument(
        "--kernel-lab", action="store_true", help="with Kernel Lab's interpreter shims (kernel_lab.interpreter), as its judge runs"
    )
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        _child(args.child, args.kernel_lab)
        return 0
    index = json.loads(INDEX.read_text())
    known = {entry["name"] for entry in index}
    unknown = sorted(set(args.names) - known)
    if unknown:
        print(f"not in index.json: {', '.join(unknown)}; its {len(known)} cells are named in README.md")
        return 2
    names = args.names or [entry["name"] for entry in index]
    print(f"{'cell':<{NAME_WIDTH}} CPU (Triton interpreter): ok, or the first error")
    print("-" * WIDTH)
    verdicts = {}
    for name in names:
        verdicts[name] = _run_child(name, args.timeout, args.kernel_lab)
        print(_row(name, verdicts[name]), flush=True)
    ok = sum(v == "ok" for v in verdicts.values())
    print("-" * WIDTH)
    print(f"{ok} of {len(verdicts)} cells ran and matched torch_run on the interpreter")
    if args.write:
        field = "cpu_kernel_lab" if args.kernel_lab else "cpu"
        for entry in index:
            entry[field] = verdicts.get(entry["name"], entry.get(field))
        INDEX.write_text(json.dumps(index, indent=2) + "\n")
        print(f"wrote the cpu field of {len(verdicts)} cells into {INDEX.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
