#!/usr/bin/env bash
# H200, stop 51, calls 1 and 3 (issue #40): every hostile, sloppy and honest case of the judge's set on the GPU,
# against the CPU's verdicts. Stop 50's logs of this set were lost, so call 1 starts it again; call 3 finishes it
# with --resume over call 1's verdicts (RESUME=<that file>), then runs EXTRA (commands) in the time left.
mkdir -p /tmp/site && tar -C /tmp/site -xJf .site_xz/site312.tar.xz || exit 1
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 TORCH_EXTENSIONS_DIR=/tmp/torch_ext
nvidia-smi -L; python3 -c "import torch, triton; print(torch.__version__, triton.__version__)"
resume=""; [ -n "$RESUME" ] && { cp "$RESUME" $OUT/gpu_verdicts.jsonl; resume=--resume; }
timeout $((${HOSTILE_UNTIL:-575} - SECONDS)) python3 benchmarks/judge_hostile_gpu.py --device cuda \
  --json $OUT/gpu_verdicts.jsonl --against benchmarks/h200_stop47/cpu_verdicts.jsonl $resume \
  > $OUT/judge_hostile.log 2>&1
echo "judge_hostile rc=$? at $SECONDS s"; cut -c1-100 $OUT/judge_hostile.log | grep -v "^ *$" | tail -45
[ -n "$EXTRA" ] && { eval "$EXTRA"; echo "extra rc=$? at $SECONDS s"; }
