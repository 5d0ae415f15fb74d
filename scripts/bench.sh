#!/usr/bin/env bash
# Benchmarks, printed side by side as ratios (never a pass/fail timing).
#
#   scripts/bench.sh [--quick] [--build DIR] [--empty-preload LIB]
#
# Today: the wall time of trivial processes with and without the preload
# (what every process that inherits LD_PRELOAD pays), as the median ratio over
# interleaved runs. --quick runs few iterations: it only proves the script
# works (CI runs it that way).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${CHAKRASHIM_TEST_BUILD_DIR:-$here/../build}
quick=""
empty=""
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=--quick ;;
    --build) build=$2; shift ;;
    --empty-preload) empty=$2; shift ;;
    -h|--help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
preload=${CHAKRASHIM_TEST_PRELOAD:-$build/shim/libchakrashim.so}
python=${CHAKRASHIM_TEST_PYTHON:-$(python3 -c 'import sys; print(sys.executable)')}
[ -f "$preload" ] || { echo "bench.sh: no $preload; build first" >&2; exit 2; }
empty=${empty:-$build/tests/preload/libchakra_bench_empty_preload.so}
extra=()
[ -f "$empty" ] && extra=(--empty-preload "$empty")
exec "$python" "$here/bench_startup.py" --preload "$preload" "${extra[@]}" $quick
