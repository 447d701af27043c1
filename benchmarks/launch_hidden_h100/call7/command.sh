python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_more/*.whl || exit 1
export PYTHONUNBUFFERED=1 PATH=/tmp/site/bin:$PATH
REPO=$PWD; L=/tmp/logs7; mkdir -p $L
nvidia-smi -L > $L/gpu.txt; cat $L/gpu.txt
save() { tar -C $L -czf $OUT/logs.tgz .; }
cd /tmp
for cover in 0 300 0 300; do
  KL_COVER_US=$cover PYTHONPATH=/tmp/site:$REPO timeout 60 python3 $REPO/tmp_diag/probe_judge.py $REPO/benchmarks/race/rowsum_tiny.py spares 2>&1 | grep -v -i warn | grep -vE "^ *[0-9.]+ +[0-9]+ |%CPU|^$" >> $L/probe_judge.log
done
cat $L/probe_judge.log; save
for cover in 0 300; do
  echo "== cover $cover" >> $L/noise.log
  KL_COVER_US=$cover PYTHONPATH=/tmp/site:$REPO timeout 70 python3 $REPO/benchmarks/judge_noise.py --rounds 2 >> $L/noise.log 2>&1
done
grep -E "==|raw" $L/noise.log | grep -E "==|quartiles" | cut -c1-90; save
