python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_more/*.whl || exit 1
export PYTHONUNBUFFERED=1 PATH=/tmp/site/bin:$PATH
REPO=$PWD; L=/tmp/logs2; mkdir -p $L
nvidia-smi -L > $L/gpu.txt; cat $L/gpu.txt
save() { tar -C $L -czf $OUT/logs.tgz .; }
PYTHONPATH=/tmp/site:$REPO timeout 260 python3 -m pytest -q -m gpu tests/test_verify.py tests/test_gpu.py tests/test_screen.py -p no:cacheprovider > $L/gpu_tests.log 2>&1
tail -8 $L/gpu_tests.log; save
cd /tmp
PYTHONPATH=/tmp/site:$REPO timeout 90 python3 $REPO/benchmarks/judge_timing_gap.py --before $REPO/tmp_diag/before > $L/gap_add.log 2>&1; tail -25 $L/gap_add.log; save
PYTHONPATH=/tmp/site:$REPO timeout 90 python3 $REPO/benchmarks/judge_timing_gap.py $REPO/benchmarks/race/rowsum_tiny.py --fast 'BLOCK=2048, num_warps=8' --before $REPO/tmp_diag/before > $L/gap_rowsum.log 2>&1; tail -25 $L/gap_rowsum.log; save
PYTHONPATH=/tmp/site:$REPO timeout 100 python3 $REPO/benchmarks/judge_noise.py > $L/noise_sized_add.log 2>&1; grep -iE "x |warn|signif" $L/noise_sized_add.log | head -40; save
