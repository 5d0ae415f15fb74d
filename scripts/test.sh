#!/usr/bin/env bash
# Builds (through setup.sh: installs what is missing first) and runs the
# whole test suite through CTest, then the hardening variants
# (scripts/test-variants.sh: ASan+UBSan, TSan, fuzzing), each in its own
# build folder. --quick runs the main suite only, for local development.
#
#   scripts/test.sh [--quick] [--build DIR] [ctest args...]
#
# At the end: each part's time and verdict, and the 10 slowest tests.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
build=$root/build
quick=0
if [ "${1:-}" = "--quick" ]; then quick=1; shift; fi
if [ "${1:-}" = "--build" ]; then build=$2; shift 2; fi
if [ "${1:-}" = "-h" ] || [ "${1:-}" = "--help" ]; then
  sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0
fi
start=$(date +%s)
# Each part's "NAME SECONDS VERDICT", test-variants.sh's parts too.
CHAKRA_CI_TIMES=$(mktemp)
export CHAKRA_CI_TIMES

# The CPU seconds (user + system) of this shell's finished children so far,
# in CPU_NOW: `times` must run in this shell (a $(...) subshell would count
# its own).
cpu_file=$(mktemp)
cpu_now() {  # sets CPU_NOW
  times >"$cpu_file"
  CPU_NOW=$(awk 'END { t = 0; for (i = 1; i <= 2; i++) { split($i, a, "m"); sub("s", "", a[2]); t += a[1] * 60 + a[2] }
             printf "%d", t }' "$cpu_file")
}

part() {  # NAME COMMAND...: runs it, notes its time, CPU time and verdict
  local name=$1 t0 c0 rc=0
  shift
  t0=$(date +%s)
  cpu_now
  c0=$CPU_NOW
  "$@" || rc=$?
  cpu_now
  echo "$name $(( $(date +%s) - t0 )) $([ $rc -eq 0 ] && echo ok || echo FAILED) $(( CPU_NOW - c0 ))" \
    >>"$CHAKRA_CI_TIMES"
  return $rc
}

summary() {  # at exit, whatever failed: the parts' times, the slowest tests
  # CPU: user + system seconds of the part's processes (2 cores: up to
  # twice its time); what CI's 30 minutes are spent on.
  echo "[test] parts:          time      CPU"
  while read -r name seconds verdict cpu; do
    printf '[test]   %-11s %5s s  %5s s  %s\n' "$name" "$seconds" "${cpu:-?}" "$verdict"
  done <"$CHAKRA_CI_TIMES"
  cpu_now
  printf '[test]   %-11s %5s s  %5s s\n' total "$(( $(date +%s) - start ))" "$CPU_NOW"
  local dirs=("$build")
  [ $quick -eq 1 ] || dirs+=("$root/build-asan" "$root/build-tsan" "$root/build-fuzz")
  echo "[test] the 10 slowest tests:"
  "$here/test-times.sh" -n 10 --since "$start" "${dirs[@]}" | sed 's/^/[test] /' || true
  rm -f "$CHAKRA_CI_TIMES" "$cpu_file"
}
trap summary EXIT

part build "$here/setup.sh" --build "$build"
status=0
# The variants' builds run beside the main suite, at the lowest CPU priority
# (nice 19): the suite's jobs spend a quarter of their time asleep or
# waiting on their children (its CPU time is about 75% of two cores'), and
# the builds take only what the tests leave. Their output goes to a log,
# printed after the variants' sanitizer tests; their tests run after the
# suite. (In CI of
# 2026-12-03 the builds, tools included, needed more than the suite left
# and finished 245 s after it; without the tools they are half that.)
variants_log=$build/variants-build.log
variants_pid=""
if [ $quick -eq 0 ]; then
  nice -n 19 "$here/test-variants.sh" --build-only --cli "$build/tools/chakrashim" >"$variants_log" 2>&1 &
  variants_pid=$!
fi
part suite ctest --test-dir "$build" --output-on-failure -j "$(nproc)" "$@" || status=$?
if [ -n "$variants_pid" ]; then
  # The sanitizer variants' tests start as soon as the suite has ended and
  # their builds are done (the builds go asan, tsan, fuzz; each says it is
  # done in CHAKRA_CI_TIMES), beside what is left of the fuzz build at
  # nice 19; the fuzz tests after it (issue #53: the fuzz build used to end
  # about a minute after the suite, and every variant's tests waited for it).
  while kill -0 "$variants_pid" 2>/dev/null &&
        ! { grep -q '^asan-build ' "$CHAKRA_CI_TIMES" && grep -q '^tsan-build ' "$CHAKRA_CI_TIMES"; }; do
    sleep 2
  done
  # One after the other: ASan's beside TSan's ended 50 s sooner, but a TSan
  # test failed under that load in one run of two (e2e.signals'
  # every-exception count, issue #53's note): until that is understood, no
  # added load on them.
  "$here/test-variants.sh" --tests-only --cli "$build/tools/chakrashim" asan tsan || status=1
  wait "$variants_pid" || status=1
  cat "$variants_log"
  "$here/test-variants.sh" --tests-only --cli "$build/tools/chakrashim" fuzz || status=1
fi
exit $status
