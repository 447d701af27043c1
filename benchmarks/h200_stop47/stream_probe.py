"""Which stream a load_inline kernel launched with ``kernel<<<grid, block>>>`` runs on, against the one PyTorch's
CUDA events are recorded on (stop 47: the judge read such kernels as "work the CUDA events do not see"). Lesson 3's
reference cell, built as load_inline builds it and as Kernel Lab's split build (kernel_lab.fastbuild) builds it."""

import importlib.util
import subprocess
import sys
import time
from pathlib import Path

import torch

CELL = Path(__file__).resolve().parents[2] / "kernel_lab/course/lessons/03_bank_conflicts/reference.py"
print("torch", torch.__version__, "cuda", torch.version.cuda)
print(subprocess.run(["nvcc", "--version"], check=False, capture_output=True, text=True).stdout.strip().splitlines()[-1])
cur, dflt = torch.cuda.current_stream(), torch.cuda.default_stream()
print("current stream", cur, "handle", hex(cur.cuda_stream), "default handle", hex(dflt.cuda_stream))
from torch.utils import cpp_extension  # noqa: E402

print("COMMON_NVCC_FLAGS", [f for f in cpp_extension.COMMON_NVCC_FLAGS if "stream" in f.lower()] or "no stream flag")


def load(split: bool):
    if split:
        from kernel_lab import fastbuild

        fastbuild.install()
    spec = importlib.util.spec_from_file_location(f"cell_{split}", CELL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def probe(module, label: str) -> None:
    (x,) = module.make_inputs()
    for _ in range(3):
        module.run(x)
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda._sleep(600_000)
    start.record()
    module.run(x)
    end.record()
    t0 = time.perf_counter()
    end.synchronize()
    after_end = (time.perf_counter() - t0) * 1e3
    torch.cuda.synchronize()
    after_all = (time.perf_counter() - t0) * 1e3
    print(
        f"{label}: events {start.elapsed_time(end):.3f} ms; host waited {after_end:.3f} ms for the end event, "
        f"{after_all:.3f} ms for the device"
    )
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        module.run(x)
        torch.cuda.synchronize()
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            print(f"  {e.name[:40]:40} stream/resource {getattr(e, 'device_resource_id', '?')}")


probe(load(split=False), "load_inline as written")
probe(load(split=True), "kernel_lab split build")
sys.stdout.flush()
