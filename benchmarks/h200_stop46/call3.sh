#!/usr/bin/env bash
# H200, stop 46, call 3 (issues #39, #40, #37): the LLM agent's own overhead per turn (stand-in server, no model);
# the GPU tests call 2 did not reach, and the one that failed there, with its traceback; then the built-in optimizer
# against an exhaustive search of the same knobs on corpus cells (benchmarks/corpus_race.py). Logs to $OUT.
mkdir -p /tmp/site && tar -C /tmp/site -xJf .site_xz/site312.tar.xz || exit 1
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 TORCH_EXTENSIONS_DIR=/tmp/torch_ext
python3 -c "import openai; print('openai', openai.__version__)"
timeout 120 python3 benchmarks/llm_turn_overhead.py > $OUT/llm_turn_overhead.log 2>&1
echo "llm_turn_overhead rc=$?"; tail -8 $OUT/llm_turn_overhead.log | cut -c1-160
timeout 90 python3 -m pytest -q -rf --tb=short -p no:cacheprovider \
  tests/test_gpu.py::test_optimize_for_real_finds_a_faster_verified_version > $OUT/gpu_test_optimize.log 2>&1
grep -E "^(FAILED|ERROR|E )|passed|failed" $OUT/gpu_test_optimize.log | cut -c1-220 | tail -12
timeout 90 python3 -m pytest -v -rf --tb=short -m gpu tests/test_gpu.py tests/test_course.py -p no:cacheprovider \
  -k "halves or course or magic" > $OUT/gpu_tests_rest.log 2>&1
grep -E "PASSED|FAILED|SKIPPED|^E |passed|failed" $OUT/gpu_tests_rest.log | sed 's/^tests\///' | cut -c1-150 | tail -14
C=../tests/cells/corpus
cd benchmarks && timeout 285 python3 corpus_race.py --most 30 --json $OUT/corpus_race.jsonl $C/unsloth_swiglu.py \
  $C/unsloth_geglu.py $C/vllm_fused_moe.py $C/flaggems_mm.py $C/liger_rms_norm.py $C/liger_layer_norm.py \
  > $OUT/corpus_race.log 2>&1
echo "corpus_race rc=$?"; grep -v "^{" $OUT/corpus_race.log | tail -14 | cut -c1-160
