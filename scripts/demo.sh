#!/usr/bin/env bash
# README command 1: install what is missing, build, then run the bundled
# example training job (examples/train_tiny.py, unmodified) under the shim
# and show what was captured.
#
#   scripts/demo.sh [--build DIR] [--out DIR]
#
# The traces go to build/demo-traces (replaced on each run).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
build=$root/build
out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift ;;
    --out) out=$2; shift ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "demo.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
out=${out:-$build/demo-traces}
"$here/setup.sh" --build "$build"
prefix=$build/prefix
python=$(python3 -c 'import sys; print(sys.executable)')
rm -rf "$out"

echo
echo "[demo] training examples/train_tiny.py for 12 steps, capturing steps 3 to 5:"
echo "[demo]   CHAKRA_PROFILE=1 CHAKRA_START_STEP=3 CHAKRA_END_STEP=5 CHAKRA_MODULE_SCOPES=1 CHAKRA_TRACE_DIR=$out \\"
echo "[demo]   LD_PRELOAD=$prefix/lib/libchakrashim.so python examples/train_tiny.py"
CHAKRA_PROFILE=1 CHAKRA_START_STEP=3 CHAKRA_END_STEP=5 CHAKRA_MODULE_SCOPES=1 CHAKRA_TRACE_DIR="$out" \
  LD_PRELOAD="$prefix/lib/libchakrashim.so" "$python" "$root/examples/train_tiny.py" --steps 12

echo
echo "[demo] the traces:"
find "$out" -type f | sort | sed 's/^/[demo]   /'
echo
"$prefix/bin/chakrashim" check "$out" || true
echo
"$prefix/bin/chakrashim" report "$out"
"$prefix/bin/chakrashim" report "$out" --html "$out/report.html"
