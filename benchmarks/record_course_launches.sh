#!/usr/bin/env bash
# Launch records of the course's fusion and reduction cells (issue #41), for the cell-level reading of their recorded
# reports: each cell run once by the profiling runner (kernel_lab.profiling.runner.run_cell with a record path, no
# profiler), at the lesson's shapes, on the GPU machine, all in one Python; $OUT/<lesson>_<version>.launches.json come
# back and go beside the reports as <version>.launches.json. A record holds the cell's tensors (shapes, dtypes,
# strides, which arguments share storage) and each launch's grid and arguments: properties of the code and its
# shapes, the same on any GPU; the reports beside them were recorded on the H100.
set -x
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/nvtx-*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
nvidia-smi -L
python3 - <<'PY'
import os, sys, traceback
from pathlib import Path
import torch, triton
from kernel_lab.profiling.runner import run_cell
print(sys.version.split()[0], torch.__version__, triton.__version__, flush=True)
out = Path(os.environ["OUT"])
for v in ("06_fusion/naive", "06_fusion/attempt_two_kernels", "06_fusion/reference", "07_reductions/naive",
          "07_reductions/reference", "07_reductions/example_atomics", "07_reductions/attempt_split2"):
    try:
        run_cell(Path("kernel_lab/course/lessons") / f"{v}.py", record=out / f"{v.replace('/', '_')}.launches.json")
        print("recorded", v, flush=True)
    except BaseException:
        print("FAILED", v, traceback.format_exc(), flush=True)
PY
ls -la "$OUT"
