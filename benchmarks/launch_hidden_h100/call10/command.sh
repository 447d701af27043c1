python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_more/*.whl || exit 1
export PYTHONUNBUFFERED=1 PATH=/tmp/site/bin:$PATH
REPO=$PWD; L=/tmp/logs10; mkdir -p $L
nvidia-smi -L > $L/gpu.txt; cat $L/gpu.txt; git -C $REPO log --oneline -1 > $L/tree.txt 2>&1
save() { tar -C $L -czf $OUT/logs.tgz .; }
PYTHONPATH=/tmp/site:$REPO timeout 150 python3 -m pytest -q -rf --tb=short -m gpu tests/test_verify.py -p no:cacheprovider > $L/gpu_tests_verify.log 2>&1
tail -3 $L/gpu_tests_verify.log; save
cd /tmp
for cell in rowsum_tiny gelu_block16 softmax_poor_block; do
PYTHONPATH=/tmp/site:$REPO timeout 110 python3 $REPO/benchmarks/autotune_race.py --rounds 3 --candidates 4 --after-profile 10 --spent $cell > $L/race_$cell.log 2>&1
grep -E "^\| $cell" $L/race_$cell.log | cut -c1-200; save
done
