python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_more/*.whl || exit 1
export PYTHONUNBUFFERED=1 PATH=/tmp/site/bin:$PATH
REPO=$PWD; L=/tmp/logs9; mkdir -p $L
nvidia-smi -L > $L/gpu.txt; cat $L/gpu.txt
save() { tar -C $L -czf $OUT/logs.tgz .; }
cd /tmp
for cell in gelu_block16 softmax_poor_block matmul_small_tiles layernorm_chunks matmul_grouped; do
PYTHONPATH=/tmp/site:$REPO timeout 150 python3 $REPO/benchmarks/autotune_race.py --rounds 3 --candidates 4 --after-profile 10 --spent $cell > $L/race_$cell.log 2>&1
grep -E "^\| $cell" $L/race_$cell.log | cut -c1-200; save
done
