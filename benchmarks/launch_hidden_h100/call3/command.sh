python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_more/*.whl || exit 1
export PYTHONUNBUFFERED=1 PATH=/tmp/site/bin:$PATH
REPO=$PWD; L=/tmp/logs3; mkdir -p $L
nvidia-smi -L > $L/gpu.txt; cat $L/gpu.txt
save() { tar -C $L -czf $OUT/logs.tgz .; }
cd /tmp
python3 -c "import torch; print(torch.__version__, torch.version.cuda)"
for cell in $REPO/benchmarks/teaching/add_tiny_block.py $REPO/benchmarks/race/rowsum_tiny.py; do
  for t in unset 1; do
    if [ $t = unset ]; then PYTHONPATH=/tmp/site:$REPO timeout 60 python3 $REPO/tmp_diag/probe_cupti.py $cell; else TEARDOWN_CUPTI=1 PYTHONPATH=/tmp/site:$REPO timeout 60 python3 $REPO/tmp_diag/probe_cupti.py $cell; fi
  done
done 2>&1 | grep -v Warn | tee $L/probe.log
save
