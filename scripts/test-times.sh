#!/usr/bin/env bash
# Prints the slowest tests of the last CTest run in each build folder, from
# the log CTest writes there (Testing/Temporary/LastTest.log), slowest
# first, one line each: seconds, name, and the folder's variant in brackets
# for a folder other than the first (build-asan/ gives [asan]).
# scripts/test.sh prints these at the end of a run.
#
#   scripts/test-times.sh [-n N] [--since EPOCH] BUILD_DIR...
#
# -n N: how many (default 10). --since EPOCH: only logs written since then
# (seconds since 1970), so that a folder this run did not test is left out.
set -euo pipefail
count=10
since=0
while [ $# -gt 0 ]; do
  case "$1" in
    -n) count=$2; shift 2 ;;
    --since) since=$2; shift 2 ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    --) shift; break ;;
    -*) echo "test-times.sh: unknown option $1" >&2; exit 2 ;;
    *) break ;;
  esac
done
first=1
for dir in "$@"; do
  log=$dir/Testing/Temporary/LastTest.log
  tag=""
  [ $first -eq 1 ] || tag=" [$(basename "$dir" | sed 's/^build-//')]"
  first=0
  [ -f "$log" ] || continue
  [ "$(stat -c %Y "$log")" -ge "$since" ] || continue
  # "12/516 Testing: NAME" opens a test's entry; its time follows the
  # test's own output ("<end of output>", then "Test time =   6.78 sec").
  awk -v tag="$tag" '/^[0-9]+\/[0-9]+ Testing: / { name = $3; done = 0 }
                     /^<end of output>$/ { done = 1 }
                     /^Test time = / && done && name != "" { printf "%8.1f s  %s%s\n", $4, name, tag; name = "" }' "$log"
done | sort -g -r -k1,1 | awk -v n="$count" 'NR <= n'  # reads all: no SIGPIPE under pipefail
