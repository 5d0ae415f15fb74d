#!/usr/bin/env bash
# Makes a DeepSpeed environment over the torch that python3 has (a virtual
# environment that sees the system's packages, with torch pinned to that
# version so pip never replaces it), for tests/e2e/test_deepspeed.py and for
# trying chakrashim on a DeepSpeed job on a machine without a GPU.
#
#   scripts/deepspeed-env.sh [VENV]       # default ~/.cache/deepspeed-venv
#
# Prints DS_PY=<its python>. DeepSpeed runs on the CPU with
# DS_ACCELERATOR=cpu (gloo; no oneCCL needed); launch a job with its Python:
#
#   DS_ACCELERATOR=cpu $DS_PY -m torch.distributed.run --nproc-per-node 2 job.py
#
# (the torchrun on PATH belongs to the system's Python, which lacks
# deepspeed). The first job builds DeepSpeed's shared-memory op into
# ~/.cache/torch_extensions (about a minute). DEEPSPEED_VERSION picks the
# release (default 0.19.8, the one the tests were written against).
set -euo pipefail
case "${1:-}" in -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; esac
venv=${1:-$HOME/.cache/deepspeed-venv}
version=${DEEPSPEED_VERSION:-0.19.8}
if ! DS_ACCELERATOR=cpu "$venv/bin/python" -c 'import deepspeed' >/dev/null 2>&1; then
  py=$(python3 -c 'import sys; print(sys.executable)')
  torch_version=$("$py" -c 'import torch; print(torch.__version__)')
  echo "deepspeed-env: making $venv (deepspeed $version over torch $torch_version)" >&2
  "$py" -m venv --system-site-packages "$venv"
  echo "torch==$torch_version" >"$venv/constraints.txt"
  "$venv/bin/pip" install --quiet -c "$venv/constraints.txt" wheel
  # No ops built at install: DeepSpeed builds what a job needs at its first run.
  DS_ACCELERATOR=cpu DS_BUILD_OPS=0 "$venv/bin/pip" install --quiet --no-build-isolation \
    -c "$venv/constraints.txt" "deepspeed==$version"
  DS_ACCELERATOR=cpu "$venv/bin/python" -c 'import deepspeed'
fi
echo "DS_PY=$venv/bin/python"
