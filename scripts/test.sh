#!/usr/bin/env bash
# Builds (through setup.sh: installs what is missing first) and runs the
# whole test suite through CTest, then the hardening variants
# (scripts/test-variants.sh: ASan+UBSan, TSan, fuzzing), each in its own
# build folder. --quick runs the main suite only, for local development.
#
#   scripts/test.sh [--quick] [--build DIR] [ctest args...]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$here/../build
quick=0
if [ "${1:-}" = "--quick" ]; then quick=1; shift; fi
if [ "${1:-}" = "--build" ]; then build=$2; shift 2; fi
if [ "${1:-}" = "-h" ] || [ "${1:-}" = "--help" ]; then
  sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'; exit 0
fi
start=$(date +%s)
"$here/setup.sh" --build "$build"
status=0
ctest --test-dir "$build" --output-on-failure -j "$(nproc)" "$@" || status=$?
echo "[test] main suite $(( $(date +%s) - start )) s"
if [ $quick -eq 0 ]; then
  "$here/test-variants.sh" || status=1
fi
echo "[test] total $(( $(date +%s) - start )) s"
exit $status
