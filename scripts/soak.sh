#!/usr/bin/env bash
# Runs the randomized soak (tests/soak/soak.py, docs/soak.md): many short
# real torch jobs under the shim, each with a scenario drawn from its seed
# (job kind, capture window, trace folder and its faults, a fault in the job),
# each judged against the same job without the shim.
#
#   scripts/soak.sh [--build DIR] [--runs N] [--seed S] [soak.py options]
#
# Run i uses seed S+i; a failure prints its seed, and
# `scripts/soak.sh --seed S --runs 1` replays it. --build is the build folder
# (default build/); the preload, CLI and libcupti double come from it.
# Other options go to soak.py (--seeds, --keep DIR, --quiet, --print).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
build=$root/build
pass=()
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
               exec python3 "$root/tests/soak/soak.py" --help ;;
    *) pass+=("$1") ;;
  esac
  shift
done
[ -d "$build" ] || { echo "soak.sh: no build folder $build (see --help)" >&2; exit 2; }
build=$(cd "$build" && pwd)
need() { [ -e "$1" ] || { echo "soak.sh: $1 is missing: build it first (ninja -C $build $2)" >&2; exit 2; }; }
need "$build/shim/libchakrashim.so" chakrashim
need "$build/tools/chakrashim" chakrashim_cli
python=$(sed -n 's/^Python3_EXECUTABLE:[A-Z]*=//p' "$build/CMakeCache.txt" | head -1)
[ -n "$python" ] || python=$(python3 -c 'import sys; print(sys.executable)')
export CHAKRASHIM_TEST_PRELOAD=$build/shim/libchakrashim.so
export CHAKRASHIM_TEST_CLI=$build/tools/chakrashim
export CHAKRASHIM_TEST_PYTHON=$python
[ -e "$build/tests/cupti_double/libfake_cupti.so" ] &&
  export CHAKRASHIM_TEST_FAKE_CUPTI=$build/tests/cupti_double/libfake_cupti.so
exec "$python" "$root/tests/soak/soak.py" ${pass[@]+"${pass[@]}"}
