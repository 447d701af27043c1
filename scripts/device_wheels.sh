#!/usr/bin/env bash
# The wheels the GPU machine lacks (its image has torch, triton, pandas, numpy, ...: see the device tool's
# KINDS.md), downloaded here for Python 3.12: .whl/ (what Kernel Lab's core, the magics and the course need),
# .whl_more/ (ipywidgets, jedi, openai: the dashboard and the LLM rewriter) and .whl_spy/ (py-spy, to profile
# a run there). A call carries at most 64 MiB with the repository (about 30): .whl is about 31, so carry the
# others only when a call needs them. Each device call carries .whl and starts with
#     python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
# --no-deps: the image's own packages (numpy, pandas, attrs, ...) must not be shadowed by other versions.
set -eu
cd "$(dirname "$0")/.."
CORE="ncu-report plotly nbformat fastjsonschema jsonschema jsonschema-specifications referencing rpds-py
jupyter-core platformdirs traitlets nvtx ipython ipython-pygments-lexers decorator matplotlib-inline
pexpect ptyprocess prompt-toolkit wcwidth stack-data asttokens executing pure-eval comm"
MORE="ipywidgets widgetsnbextension jupyterlab-widgets jedi parso openai distro jiter pydantic pydantic-core sniffio
annotated-types typing-inspection"
get() {  # folder names...
  local dest=$1; shift
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_34_x86_64 --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_25_x86_64 --platform manylinux_2_24_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
    --platform manylinux_2_5_x86_64 --platform manylinux1_x86_64 -d "$dest" "$@"
}
rm -rf .whl .whl_more .whl_spy
get .whl $CORE
get .whl_more $MORE
get .whl_spy py-spy
du -sh .whl .whl_more .whl_spy
