#!/usr/bin/env bash
# Benchmarks, printed side by side as ratios (never a pass/fail timing).
#
#   scripts/bench.sh [--quick] [--build DIR] [--empty-preload LIB]
#
# 1. bench_startup.py: the wall time of trivial processes with and without
#    the preload (what every process that inherits LD_PRELOAD pays).
# 2. bench_capture.py: training-step time on examples/train_tiny.py without
#    the shim, with it outside and inside its window, and NeMo's in-script
#    torch.profiler way over the same steps. bench_spans.py: what op spans
#    cost per op beside torch.profiler's CPU-only recording, on an op-heavy
#    loop, in step time and (with valgrind, full mode only) in instructions
#    under callgrind, which a busy machine does not disturb; and on-demand
#    mode waiting for a trigger, beside plain; bench_step_hooks.py (full
#    mode): what counting a step costs outside the window, in instructions,
#    beside the floor of counting with torch.optim's hooks. bench_trigger.py: the latency
#    from `chakrashim trigger` to the first captured step. bench_window_end.py:
#    a window's first step, its closing step and the two after it on a
#    2-rank gloo DDP job, beside the same job without the shim.
# 3. bench_memory (device trace, then with the native ET too), bench_et
#    (torch's ET observer against chakrashim's recorder), bench_check,
#    bench_link, bench_convert: memory cap, ET cost, check, link, and link +
#    convert from a capture folder; bench_simulate: convert's output in
#    ASTRA-sim against the job's own time (issue #36).
# 4. chakrashim_bench_decode: CUPTI records decoded and written per second.
# All as medians over interleaved runs, side by side. --quick runs few
# iterations: it only proves the scripts work (CI runs it that way).
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
status=0
failed=()
# Runs one benchmark; a failure is remembered by name and said at the end, so
# that the last lines of a CI log name the part that failed.
part() {
  local name=$1; shift
  local rc=0
  "$@" || rc=$?
  if [ $rc -ne 0 ]; then status=1; failed+=("$name (exit $rc)"); fi
}
part startup "$python" "$here/bench/bench_startup.py" --preload "$preload" "${extra[@]}" $quick
echo
if "$python" -c 'import torch' 2>/dev/null && [ -f "$build/shim/libchakrashim_torch.so" ]; then
  part capture "$python" "$here/bench/bench_capture.py" --preload "$preload" $quick
  echo
  part spans "$python" "$here/bench/bench_spans.py" --preload "$preload" $quick
  if [ -z "$quick" ] && command -v valgrind >/dev/null; then
    echo; part spans "$python" "$here/bench/bench_spans.py" --preload "$preload" --instructions
    echo; part step_hooks "$python" "$here/bench/bench_step_hooks.py" --preload "$preload"
  fi
  echo
  # Quick mode proves the script with the native ET, which runs every path
  # of the device-trace-only run too (one run of three jobs, not two).
  if [ -z "$quick" ]; then
    part memory "$python" "$here/bench/bench_memory.py" --preload "$preload" --cap 8M
    echo
  fi
  part memory "$python" "$here/bench/bench_memory.py" --preload "$preload" --cap 8M --et native $quick
  echo
  part et "$python" "$here/bench/bench_et.py" --preload "$preload" $quick
else
  echo "bench: no torch or no bridge: the capture benchmark is skipped"
fi
# Further benchmarks are appended below, each after an empty line.
if "$python" -c 'import torch' 2>/dev/null && [ -f "$build/shim/libchakrashim_torch.so" ]; then
  # A window's boundaries on a 2-rank gloo job (issue #34).
  echo; part window_end "$python" "$here/bench/bench_window_end.py" --preload "$preload" $quick
fi
if "$python" -c 'import torch' 2>/dev/null && [ -f "$build/shim/libchakrashim_torch.so" ]; then
  echo; part trigger "$python" "$here/bench/bench_trigger.py" --preload "$preload" \
    --cli "${CHAKRASHIM_TEST_CLI:-$build/tools/chakrashim}" $quick
fi
echo; part check "$python" "$here/bench/bench_check.py" --cli "${CHAKRASHIM_TEST_CLI:-$build/tools/chakrashim}" $quick
echo; part link "$python" "$here/bench/bench_link.py" --cli "${CHAKRASHIM_TEST_CLI:-$build/tools/chakrashim}" $quick
echo; part convert "$python" "$here/bench/bench_convert.py" --cli "${CHAKRASHIM_TEST_CLI:-$build/tools/chakrashim}" $quick
# Fidelity of convert's output in ASTRA-sim (issue #36): the bundled example's
# 5-step window, simulated (ASTRA_SIM_BIN, else summed durations) against runs
# without the shim.
if "$python" -c 'import torch' 2>/dev/null && [ -f "$build/shim/libchakrashim_torch.so" ]; then
  echo; part simulate "$python" "$here/bench/bench_simulate.py" --preload "$preload" \
    --cli "${CHAKRASHIM_TEST_CLI:-$build/tools/chakrashim}" --calibrate $quick
fi
# The CUPTI collector's decode and write rates on synthetic records.
decode_bench=$build/tests/chakrashim_bench_decode
if [ -x "$decode_bench" ]; then
  echo; part decode "$decode_bench" --kernels "$([ -n "$quick" ] && echo 100000 || echo 1000000)"
else
  echo; echo "bench: no $decode_bench (tests not built): the CUPTI decode benchmark is skipped"
fi
if [ ${#failed[@]} -gt 0 ]; then
  echo; echo "bench: failed: ${failed[*]}" >&2
fi
exit $status
