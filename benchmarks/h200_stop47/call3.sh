#!/usr/bin/env bash
# H200, stop 47, call 3 (issues #40, #37): first, which stream a load_inline kernel runs on against the one the
# judge's CUDA events are recorded on (stream_probe.py). Then the built-in optimizer against an exhaustive search of the same knobs
# (benchmarks/corpus_race.py) on the corpus cells stop 46 did not reach, and again on the three it did (now on the
# largest declared shape, the one the optimizer times). Each cell in a process of its own with a time limit,
# held-out cells between the others; the table at the end. Logs to $OUT.
mkdir -p /tmp/site && tar -C /tmp/site -xJf .site_xz/site312.tar.xz || exit 1
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 TORCH_EXTENSIONS_DIR=/tmp/torch_ext
timeout 150 python3 benchmarks/h200_stop47/stream_probe.py > $OUT/stream_probe.log 2>&1
echo "stream_probe rc=$?"; tail -20 $OUT/stream_probe.log | cut -c1-200
cd benchmarks
for cell in unsloth_geglu liger_rms_norm liger_layer_norm xformers_rms_norm liger_swiglu_bwd liger_swiglu unsloth_swiglu_bwd \
    liger_geglu liger_cross_entropy flaggems_sum flaggems_argmax liger_rope vllm_per_token_group_quant_fp8 \
    vllm_decode_attention vllm_prefill_attention flaggems_cat unsloth_cross_entropy flaggems_mean vllm_fused_moe unsloth_swiglu; do
  left=$((${RACE_UNTIL:-560} - SECONDS)); [ $left -lt 45 ] && { echo "out of time before $cell"; break; }
  start=$SECONDS
  timeout $((left < 120 ? left : 120)) python3 corpus_race.py --most 30 --json $OUT/corpus_race.jsonl \
    ../tests/cells/corpus/$cell.py > $OUT/race_$cell.log 2>&1
  echo "$cell rc=$? $((SECONDS - start)) s"
done
python3 corpus_race.py --table $OUT/corpus_race.jsonl
