#!/usr/bin/env bash
# H200, stop 49, call 2 (issue #37): the built-in optimizer against an exhaustive search of the same knobs
# (benchmarks/corpus_race.py, timed by CUDA-graph replay) on the corpus cells stop 47 did not reach, unsloth_geglu
# again last (its judge refusals on the odd shape, with the whole log line). Each cell in a process of its own with
# a time limit; the table at the end. Logs to $OUT.
mkdir -p /tmp/site && tar -C /tmp/site -xJf .site_xz/site312.tar.xz || exit 1
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 TORCH_EXTENSIONS_DIR=/tmp/torch_ext
cd benchmarks
for cell in ${CELLS:-liger_swiglu_bwd liger_swiglu unsloth_swiglu_bwd liger_geglu liger_cross_entropy flaggems_sum \
    flaggems_argmax liger_rope vllm_per_token_group_quant_fp8 vllm_decode_attention}; do
  left=$((${RACE_UNTIL:-570} - SECONDS)); [ $left -lt 40 ] && { echo "out of time before $cell"; break; }
  start=$SECONDS
  timeout $((left < 110 ? left : 110)) python3 corpus_race.py --most 30 --json $OUT/corpus_race.jsonl \
    ../tests/cells/corpus/$cell.py > $OUT/race_$cell.log 2>&1
  echo "$cell rc=$? $((SECONDS - start)) s"
done
python3 corpus_race.py --table $OUT/corpus_race.jsonl
