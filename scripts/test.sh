#!/usr/bin/env bash
# Builds (through setup.sh: installs what is missing first) and runs the
# whole test suite through CTest.
#
#   scripts/test.sh [--build DIR] [ctest args...]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$here/../build
if [ "${1:-}" = "--build" ]; then build=$2; shift 2; fi
if [ "${1:-}" = "-h" ] || [ "${1:-}" = "--help" ]; then
  sed -n '2,5p' "$0" | sed 's/^# \{0,1\}//'; exit 0
fi
start=$(date +%s)
"$here/setup.sh" --build "$build"
status=0
ctest --test-dir "$build" --output-on-failure -j "$(nproc)" "$@" || status=$?
echo "[test] total $(( $(date +%s) - start )) s"
exit $status
