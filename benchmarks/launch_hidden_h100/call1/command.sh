python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_more/*.whl || exit 1
export PYTHONUNBUFFERED=1 PATH=/tmp/site/bin:$PATH
REPO=$PWD; L=/tmp/logs1; mkdir -p $L
nvidia-smi -L > $L/gpu.txt; cat $L/gpu.txt
cd /tmp
for tree in before after; do
  P=$REPO; [ $tree = before ] && P=$REPO/tmp_diag/before
  PYTHONPATH=/tmp/site:$P timeout 150 python3 $REPO/benchmarks/screen_fidelity.py rowsum_tiny softmax_poor_block gelu_block16 > $L/fidelity_$tree.log 2>&1
  echo "== $tree"; grep -E "configurations|original" $L/fidelity_$tree.log
  tar -C $L -czf $OUT/logs.tgz .
done
for cell in rowsum_tiny; do
  PYTHONPATH=/tmp/site:$REPO timeout 200 python3 $REPO/benchmarks/autotune_race.py --rounds 3 --candidates 4 --after-profile 10 --spent $cell > $L/race_${cell}_after.log 2>&1
  grep -E "^\| $cell|proposed|correct|stopped|best" $L/race_${cell}_after.log | head -30
  tar -C $L -czf $OUT/logs.tgz .
done
