python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_more/*.whl || exit 1
export PYTHONUNBUFFERED=1 PATH=/tmp/site/bin:$PATH
REPO=$PWD; L=/tmp/logs6; mkdir -p $L
nvidia-smi -L > $L/gpu.txt; cat $L/gpu.txt
save() { tar -C $L -czf $OUT/logs.tgz .; }
PYTHONPATH=/tmp/site:$REPO timeout 250 python3 -m pytest -q -rf --tb=short -m gpu tests/test_verify.py tests/test_gpu.py tests/test_screen.py -p no:cacheprovider --deselect tests/test_gpu.py::test_optimize_for_real_finds_a_faster_verified_version > $L/gpu_tests.log 2>&1
tail -15 $L/gpu_tests.log; save
cd /tmp
PYTHONPATH=/tmp/site:$REPO timeout 120 python3 $REPO/benchmarks/autotune_race.py --rounds 3 --candidates 4 --after-profile 10 --spent rowsum_tiny > $L/race_rowsum_tiny.log 2>&1
grep -E "^\| rowsum|proposed|correct|best|search:" $L/race_rowsum_tiny.log | head -20; save
PYTHONPATH=/tmp/site:$REPO timeout 60 python3 $REPO/tmp_diag/probe_judge.py $REPO/benchmarks/race/rowsum_tiny.py spares 2>&1 | grep -v -i warn | grep -vE "^ *[0-9.]+ +[0-9]+ " > $L/probe_judge.log; cat $L/probe_judge.log; save
PYTHONPATH=/tmp/site:$REPO timeout 70 python3 $REPO/benchmarks/judge_noise.py > $L/noise_sized_add.log 2>&1; grep -E "candidate [0-9]|signif" $L/noise_sized_add.log | cut -c1-200 | head -30; save
PYTHONPATH=/tmp/site:$REPO timeout 80 python3 $REPO/benchmarks/screen_fidelity.py rowsum_tiny softmax_poor_block gelu_block16 > $L/fidelity.log 2>&1; grep -E "configurations|original" $L/fidelity.log; save
