#!/usr/bin/env bash
# chakrashim on a real NeMo job (issue #51), like compat.sh for torch
# versions: makes a NeMo environment over the torch that python3 has, then
# runs scripts/nemo_check.py with it: a small ModelPT job
# (tests/e2e/jobs/nemo_job.py, Lightning, CPU) under the shim with a window,
# with gradient accumulation, with a window the job's end cuts, and on
# demand; NeMo's own chakra_profile alone and beside ours. Each capture's
# steps are judged against trainer.global_step in both files, and check,
# report, link and convert run on it. Prints one table; exit 0 when every
# row passed, 1 when one failed, 77 when --no-install finds no NeMo (CTest's
# e2e.nemo_check then reports it skipped, with the reason).
#
#   scripts/nemo-check.sh [--venv DIR] [--build DIR] [--keep DIR] [--no-install]
#
#   --venv DIR     the NeMo environment (default $CHAKRASHIM_NEMO_VENV, else
#                  ~/.cache/nemo-venv); made when it cannot import NeMo
#   --build DIR    chakrashim's build folder (default build/)
#   --keep DIR     keep the captures there
#   --no-install   never make the environment: skip (77) without one
#
# Making the environment installs nemo-toolkit 3.0.0 and the Lightning,
# Hydra and OmegaConf versions it wants, with torch pinned to the installed
# one (pip would otherwise replace it): a few minutes and about 2 GB.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
venv=${CHAKRASHIM_NEMO_VENV:-$HOME/.cache/nemo-venv} build=$root/build keep="" install=1
while [ $# -gt 0 ]; do
  case "$1" in
    --venv) venv=$2; shift ;;
    --build) build=$2; shift ;;
    --keep) keep=$2; shift ;;
    --no-install) install=0 ;;
    -h|--help) sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "nemo-check.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
py=$venv/bin/python
if ! "$py" -c 'from nemo.core import ModelPT' >/dev/null 2>&1; then
  if [ $install = 0 ]; then
    echo "nemo-check: skipped: no NeMo environment at $venv (scripts/nemo-check.sh without --no-install makes one)"
    exit 77
  fi
  base=$(python3 -c 'import sys; print(sys.executable)')
  torch_version=$("$base" -c 'import torch; print(torch.__version__)')
  echo "nemo-check: making $venv (nemo-toolkit 3.0.0 over torch $torch_version)" >&2
  "$base" -m venv --system-site-packages "$venv"
  echo "torch==$torch_version" >"$venv/constraints.txt"
  "$venv/bin/pip" install --quiet -c "$venv/constraints.txt" nemo-toolkit==3.0.0
  "$venv/bin/pip" install --quiet -c "$venv/constraints.txt" "hydra-core>1.3,<=1.3.2" \
    "lightning>2.2.1,<=2.4.0" "omegaconf<=2.3" "nv_one_logger_core>=2.3.1" \
    "nv_one_logger_training_telemetry>=2.3.1" "nv_one_logger_pytorch_lightning_integration>=2.3.1"
  "$py" -c 'from nemo.core import ModelPT' >/dev/null
fi
lib=$build/shim/libchakrashim.so cli=$build/tools/chakrashim
[ -f "$lib" ] && [ -x "$cli" ] || { echo "nemo-check: no build at $build (cmake --build it first)" >&2; exit 2; }
exec "$py" "$root/scripts/nemo_check.py" --preload "$lib" --cli "$cli" --chakra-run "$root/scripts/chakra-run" \
  ${keep:+--keep "$keep"}
