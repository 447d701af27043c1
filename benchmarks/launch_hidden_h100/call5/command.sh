python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_more/*.whl || exit 1
export PYTHONUNBUFFERED=1 PATH=/tmp/site/bin:$PATH
REPO=$PWD; L=/tmp/logs5; mkdir -p $L
nvidia-smi -L > $L/gpu.txt; cat $L/gpu.txt
cd /tmp
for cell in $REPO/benchmarks/race/rowsum_tiny.py $REPO/tests/cells/sized_add_ref.py; do
  echo "== $cell"; PYTHONPATH=/tmp/site:$REPO timeout 100 python3 $REPO/tmp_diag/probe_batches.py $cell 2>&1 | grep -v -i warn
done | tee $L/probe_batches.log
tar -C $L -czf $OUT/logs.tgz .
