#!/usr/bin/env bash
# H200, stop 50, calls 2 and 3 (issue #37): the built-in optimizer against an exhaustive search of the same knobs
# (benchmarks/corpus_race.py, timed by CUDA-graph replay) on the corpus cells not raced yet, and again on the three
# stop 49 left without a clean row (unsloth_geglu: out-of-memory refusals; liger_swiglu_bwd, unsloth_swiglu_bwd:
# in-place warm-up). Each cell in a process of its own with a time limit (LIMIT, longer for attention); the table
# at the end. Logs to $OUT.
mkdir -p /tmp/site && tar -C /tmp/site -xJf .site_xz/site312.tar.xz || exit 1
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 TORCH_EXTENSIONS_DIR=/tmp/torch_ext
cd benchmarks
for cell in $CELLS; do
  limit=${LIMIT:-110}; case $cell in *attention|liger_cross_entropy|liger_fused*) limit=${LONG:-200};; esac
  left=$((${RACE_UNTIL:-575} - SECONDS)); [ $left -lt 40 ] && { echo "out of time before $cell"; break; }
  start=$SECONDS
  timeout $((left < limit ? left : limit)) python3 corpus_race.py --most 30 --json $OUT/corpus_race.jsonl \
    ../tests/cells/corpus/$cell.py > $OUT/race_$cell.log 2>&1
  echo "$cell rc=$? $((SECONDS - start)) s"; tail -2 $OUT/race_$cell.log | cut -c1-200
done
python3 corpus_race.py --table $OUT/corpus_race.jsonl
