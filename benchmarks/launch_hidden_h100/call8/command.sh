python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_more/*.whl || exit 1
export PYTHONUNBUFFERED=1 PATH=/tmp/site/bin:$PATH
REPO=$PWD; L=/tmp/logs8; mkdir -p $L
nvidia-smi -L > $L/gpu.txt; cat $L/gpu.txt
save() { tar -C $L -czf $OUT/logs.tgz .; }
PYTHONPATH=/tmp/site:$REPO timeout 280 python3 -m pytest -q -rf --tb=short -m gpu tests/test_verify.py tests/test_gpu.py tests/test_screen.py -p no:cacheprovider --deselect tests/test_gpu.py::test_optimize_for_real_finds_a_faster_verified_version > $L/gpu_tests.log 2>&1
tail -6 $L/gpu_tests.log; save
cd /tmp
for n in 1 2; do
PYTHONPATH=/tmp/site:$REPO timeout 120 python3 $REPO/benchmarks/autotune_race.py --rounds 3 --candidates 4 --after-profile 10 --spent rowsum_tiny > $L/race_rowsum_tiny_$n.log 2>&1
grep -E "^\| rowsum|proposed|correct|best|search:" $L/race_rowsum_tiny_$n.log | cut -c1-150 | head -14; save
done
PYTHONPATH=/tmp/site:$REPO timeout 100 python3 $REPO/benchmarks/judge_timing_gap.py --before $REPO/tmp_diag/before > $L/gap_add.log 2>&1; grep -E "judge processes|judge loop" $L/gap_add.log | cut -c1-250; save
