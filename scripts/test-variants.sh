#!/usr/bin/env bash
# Builds and runs the hardening variants of the suite, each in its own
# build folder beside the main one (scripts/test.sh runs this after the main
# suite; README "Sanitizers and fuzzing"):
#
#   asan  build-asan/  GCC, ASan+UBSan: unit, preload and a few e2e tests
#   tsan  build-tsan/  GCC, TSan: unit tests that start threads, e2e tests with threads
#   fuzz  build-fuzz/  clang-14 libFuzzer targets (-O0), CHAKRA_FUZZ_SECONDS each
#
#   scripts/test-variants.sh [--build-only|--tests-only] [--cli PATH] [asan] [tsan] [fuzz]
#                                                     (default: all three)
#
# The sanitizer variants build what runs in the job's process (the preload,
# the bridge, the collector, their unit tests), not the tools: their tests
# run the `chakrashim` command of the main build (--cli; by default
# build/tools/chakrashim, else the variant builds its own). The tools are
# judged under ASan+UBSan by the fuzz variant, every reader and command
# (issue #39: the tools were a third of each sanitizer build).
#
# --build-only builds the chosen variants and runs none of their tests;
# --tests-only runs the tests of variants built before (scripts/test.sh
# builds them in the background, at the lowest priority, while the main
# suite runs: the suite leaves CPU idle while its jobs sleep and wait).
#
# Sanitizer builds compile -O0 -g1 (line tables for the reports): the
# variants exist to find bugs, not to time anything; on CI's 2 cores their
# builds cost more than their test subsets, and -O0 compiles a third faster
# than -O1 (kineto_trace_writer_test.cpp: 30 s against 44 s). Only the
# targets the chosen tests need are built, as unity builds (CMake batches
# eight sources into one translation unit): the variants' builds take half
# the CPU time (ASan+UBSan targets: 386 s of CPU against 731 s), since most
# of a translation unit's time here is torch's and GoogleTest's headers. The
# main build (setup.sh) compiles the libraries one source a unit, as users
# build them, so a missing #include still fails there (its unit tests are
# unity builds too: tests/CMakeLists.txt). Prints each part's time (each
# variant's build and its tests apart); exits non-zero when any part failed.
# Under scripts/test.sh (CHAKRA_CI_TIMES names a file), the times go into
# that file instead, for its summary at the end.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
python=$(python3 -c 'import sys; print(sys.executable)')
jobs=$(nproc)
steps=(build tests)
case "${1:-}" in
  --build-only) steps=(build); shift ;;
  --tests-only) steps=(tests); shift ;;
esac
cli=$root/build/tools/chakrashim
if [ "${1:-}" = "--cli" ]; then cli=$2; shift 2; fi
parts=("$@")
[ ${#parts[@]} -gt 0 ] || parts=(asan tsan fuzz)
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
log() { echo "[variants] $*"; }

# What each sanitizer variant runs, and why. A variant runs the CTest tests
# its regex picks; in the end-to-end files named in its ONLY list, only the
# test methods named there (tests/support/chakra_test.py,
# CHAKRASHIM_TEST_ONLY): under a sanitizer a job runs 3 to 10 times slower,
# and the whole end-to-end suite took 17 minutes a variant on CI's 2 cores.
# Each subset keeps one job for each kind of code the variant can judge.
# (GoogleTest names start with a capital; CTest's own tests are label.name.)
#
# ASan+UBSan: memory. Every pure stage and tool in-process (leaks checked
# too); exports, RUNPATH (our dlopen entry built with the sanitizer's flags),
# inert processes, README table (preload.bridge_load is left out: it needs a
# second copy of the bridge built, the slowest target, and every job loads
# the real bridge anyway); the writers and publishing on each exit path (end
# of window, end of job, sys.exit, exception, SIGTERM, flush signal, gzip,
# failing writes); the CUPTI decoder on the double's records, with the
# buffer cap; the native ET recorder (its chunks, user threads, memory cap,
# SIGTERM); repeated windows and bad trigger files (on demand). (The tools,
# tools.check, tools.link and tools.trigger whole, ran here until issue
# #39: the fuzz variant runs every reader and command under ASan+UBSan.)
asan_tests='^[A-Z]|^unit\.|^preload\.(exports|runpath|inert|readme_vars)$|^e2e\.(window|exit_and_files|signals|cupti|et_recorder|disk_faults|on_demand)$'
asan_only="window:test_the_schedule_2_9_1_2 window:test_a_job_that_ends_before_end
  exit_and_files:test_sys_exit_in_mid_window exit_and_files:test_an_uncaught_exception_in_mid_window
  exit_and_files:test_an_exception_while_torch_distributed_is_asked
  exit_and_files:test_gzip_writes exit_and_files:test_an_unwritable_trace_dir_is_one_line
  signals:test_sigterm_finalizes_the_files signals:test_the_flush_signal_writes_the_files
  cupti:test_kernels_and_memcpys_are_linked cupti:test_the_buffer_cap_drops
  cupti:test_sigterm_writes_the_gpu_records
  et_recorder:test_user_threads_give_a_valid_et et_recorder:test_memory_cap_cuts
  et_recorder:test_sigterm_in_mid_window_leaves_complete_files
  disk_faults:test_writes_that_fail_through_rlimit_fsize
  on_demand:test_three_windows_every_five_steps on_demand:test_bad_trigger_files_are_ignored"
# TSan: threads. The in-process unit tests that start threads or fork
# (issue #53: the single-threaded ones gave TSan nothing to judge; the
# tools' rank pools ran here until issue #39; their readers are fuzzed);
# a capture (the stepping thread, the background writer); the signal handoff
# (the relay's watcher, the torch.distributed watch thread, 3 gloo runs
# instead of 10; a second SIGINT; SIGTERM as the window closes, the relay's
# stop against its watcher); children forked in mid-window, into a relative
# trace folder (the fork guard's descriptor search), and after a cut by
# another thread (TSan runs them with die_after_fork=0, tests/support/chakra_test.py;
# workers forked while a thread runs ops are left out: their new threads
# reuse ids of the parent's, which TSan reports as "dup thread"); the CUPTI
# collector (decode thread, the double's worker thread, launches on a user
# thread); steps on one thread and ops on another; the native recorder with
# user threads, with a thread per op (buffers handed on at thread exit), and
# its take racing a recording thread (unit EtRecorderTake, libtorch linked);
# the trigger watch thread (on demand, trigger files mid-run).
tsan_tests='^[A-Z]|^unit\.|^preload\.(runpath|inert)$|^e2e\.(window|signals|signals_awkward|fork|cupti|threads_and_memory|et_recorder|on_demand)$'
tsan_only="window:test_a_plain_loop_keeps_exactly window:test_the_schedule_2_9_1_2
  signals:test_sigterm_finalizes_the_files signals:test_sigterm_twice
  signals:test_the_flush_signal_writes_the_files signals:test_sigterm_after_the_flush_signal
  signals:test_sigterm_while_torch_distributed_is_asked signals:test_every_exception
  signals:test_sigterm_as_the_window_closes signals:test_a_second_ctrl_c
  fork:test_a_relative_trace_folder
  fork:test_dataloader_workers_forked_in_mid_window fork:test_a_child_forked_after_the_memory_cap
  cupti:test_kernels_and_memcpys_are_linked cupti:test_launches_on_a_user_thread
  cupti:test_the_buffer_cap_drops cupti:test_the_flush_signal_writes_the_gpu_records
  threads_and_memory:test_steps_on_a_non_main_thread threads_and_memory:test_the_cap_cuts
  threads_and_memory:test_a_thread_per_op
  et_recorder:test_user_threads_give_a_valid_et et_recorder:test_forked_workers_leave
  on_demand:test_a_trigger_file_mid_run"
san_targets=(chakrashim chakrashim_torch chakrashim_unit_tests chakra_runpath_host
             chakra_fixture_outer chakra_fixture_dep chakra_naive_wrapper chakra_thread_count
             chakrashim_cupti_decoder_tests chakra_fake_cupti chakra_fake_cupti_selftest
             chakra_fake_cuda chakrashim_bridge_tests)

# Configures (once) and builds DIR with the extra cmake args, then the targets.
build() {
  local dir=$1; shift
  local targets=()
  while [ "$1" != "--" ]; do targets+=("$1"); shift; done
  shift
  if [ ! -f "$dir/CMakeCache.txt" ]; then
    cmake -S "$root" -B "$dir" "${generator[@]}" -DPython3_EXECUTABLE="$python" -DCMAKE_UNITY_BUILD=ON \
      "$@" >/dev/null || return 1
  fi
  cmake --build "$dir" -j "$jobs" --target "${targets[@]}"
}

# The sanitizer variants' tests run the main build's command; without one,
# the variant builds its own (the tools, built with the sanitizer).
san_cli_args() {  # DIR: prints the cmake args; adds chakrashim_cli to san_targets if needed
  local dir=$1 want=""
  [ -x "$cli" ] && want=$(cd "$(dirname "$cli")" && pwd)/$(basename "$cli")
  if [ -z "$want" ]; then
    log "no $cli: the variant builds its own chakrashim command"
    san_targets+=(chakrashim_cli)
  fi
  # Told again to a variant configured before with another command.
  if [ -f "$dir/CMakeCache.txt" ] && ! grep -qx "CHAKRA_TEST_CLI:FILEPATH=$want" "$dir/CMakeCache.txt"; then
    cmake "$dir" -DCHAKRA_TEST_CLI="$want" >/dev/null
  fi
  san_args=(-DCHAKRA_TEST_CLI="$want")
}

san_flags=(-DCMAKE_BUILD_TYPE=Debug "-DCMAKE_CXX_FLAGS_DEBUG=-O0 -g1" "-DCMAKE_C_FLAGS_DEBUG=-O0 -g1")

# Each variant in two timed steps: its build, then its tests (skipped when
# the build failed).
build_asan() {
  san_cli_args "$root/build-asan"
  build "$root/build-asan" "${san_targets[@]}" -- "${san_flags[@]}" "${san_args[@]}" "-DCHAKRA_SANITIZE=address;undefined"
}
tests_asan() {
  CHAKRASHIM_TEST_ONLY="$asan_only" \
    ctest --test-dir "$root/build-asan" --output-on-failure -j "$jobs" -R "$asan_tests"
}
build_tsan() {
  san_cli_args "$root/build-tsan"
  # Of the unit tests, only the sources whose tests start a thread or fork
  # (tests/CMakeLists.txt, CHAKRA_THREAD_UNIT_SOURCES; unit.thread_sources
  # keeps that list exact): TSan judges nothing in a single-threaded test.
  local targets=("${san_targets[@]/#chakrashim_unit_tests/chakrashim_thread_unit_tests}")
  build "$root/build-tsan" "${targets[@]}" -- "${san_flags[@]}" "${san_args[@]}" -DCHAKRA_SANITIZE=thread
}
tests_tsan() {
  CHAKRASHIM_TEST_ONLY="$tsan_only" CHAKRASHIM_TEST_RUNS=3 \
    ctest --test-dir "$root/build-tsan" --output-on-failure -j "$jobs" -R "$tsan_tests"
}
build_fuzz() {
  # No torch: the fuzz targets link only the pure libraries. -O0 as the
  # sanitizer variants (issue #53): CI's fuzz tests replay every committed
  # seed under ASan+UBSan and explore for CHAKRA_FUZZ_SECONDS (3) each, a
  # regression net, not a campaign; at -O0 the build took 158 s of CPU
  # against 295 s at -O2, and the targets ran 0.3 to 0.7 times as many
  # inputs a second. For a long campaign, an optimized build:
  # CHAKRA_FUZZ_OPTIMIZE=1 (a folder of its own, build-fuzz-opt) and
  # -DCHAKRA_FUZZ_SECONDS=600 (docs/maintainers.md).
  local dir=$root/build-fuzz flags=("${san_flags[@]}")
  if [ "${CHAKRA_FUZZ_OPTIMIZE:-0}" = 1 ]; then dir=$root/build-fuzz-opt; flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo); fi
  CC=clang-14 CXX=clang++-14 build "$dir" chakra_fuzzers -- "${flags[@]}" -DCHAKRA_FUZZ=ON -DCHAKRA_WITH_TORCH=OFF
}
tests_fuzz() {
  local dir=$root/build-fuzz
  [ "${CHAKRA_FUZZ_OPTIMIZE:-0}" = 1 ] && dir=$root/build-fuzz-opt
  ctest --test-dir "$dir" --output-on-failure -j "$jobs" -L fuzz
}

status=0
summary=()
# The CPU seconds of this shell's finished children so far, in CPU_NOW
# (scripts/test.sh).
cpu_file=$(mktemp)
trap 'rm -f "$cpu_file"' EXIT
cpu_now() {  # sets CPU_NOW
  times >"$cpu_file"
  CPU_NOW=$(awk 'END { t = 0; for (i = 1; i <= 2; i++) { split($i, a, "m"); sub("s", "", a[2]); t += a[1] * 60 + a[2] }
             printf "%d", t }' "$cpu_file")
}
timed() {  # NAME FUNCTION: runs it, notes its time, CPU time and verdict; its status
  local name=$1 t0 c0 cpu rc=0 result=ok
  t0=$(date +%s)
  cpu_now
  c0=$CPU_NOW
  log "$name: start"
  "$2" || rc=$?
  [ $rc -eq 0 ] || { result=FAILED; status=1; }
  cpu_now
  cpu=$(( CPU_NOW - c0 ))
  summary+=("$name $(( $(date +%s) - t0 )) $result $cpu")
  log "$name: $result in $(( $(date +%s) - t0 )) s (CPU $cpu s)"
  # Under scripts/test.sh, said as soon as done: it waits for these lines
  # (a build that is done lets its tests start while the next one builds).
  [ -z "${CHAKRA_CI_TIMES:-}" ] || echo "$name $(( $(date +%s) - t0 )) $result $cpu" >>"$CHAKRA_CI_TIMES"
  return $rc
}
for part in "${parts[@]}"; do
  case "$part" in asan|tsan|fuzz) ;; *) echo "test-variants.sh: unknown part $part" >&2; exit 2 ;; esac
done
for part in "${parts[@]}"; do
  case "${steps[*]}" in
    "build tests") timed "$part-build" "build_$part" && timed "$part-tests" "tests_$part" ;;
    build) timed "$part-build" "build_$part" ;;
    tests) timed "$part-tests" "tests_$part" ;;
  esac
done
# Under scripts/test.sh each part's line went to CHAKRA_CI_TIMES as it ended.
if [ -z "${CHAKRA_CI_TIMES:-}" ]; then
  for line in "${summary[@]}"; do
    set -- $line
    log "$(printf '%-11s %5s s  CPU %5s s  %s' "$1" "$2" "$4" "$3")"
  done
fi
exit $status
