python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_more/*.whl || exit 1
export PYTHONUNBUFFERED=1 PATH=/tmp/site/bin:$PATH
REPO=$PWD; L=/tmp/logs4; mkdir -p $L
nvidia-smi -L > $L/gpu.txt; cat $L/gpu.txt
save() { tar -C $L -czf $OUT/logs.tgz .; }
cd /tmp
for mode in spares none spares none; do
  PYTHONPATH=/tmp/site:$REPO timeout 120 python3 $REPO/tmp_diag/probe_judge.py $REPO/benchmarks/race/rowsum_tiny.py $mode 2>&1 | grep -v -i warn >> $L/probe_judge.log
done
grep -vE "^ *[0-9.]+ +[0-9]+ " $L/probe_judge.log
save
