#!/usr/bin/env bash
# Builds and runs the hardening variants of the suite, each in its own
# build folder beside the main one (scripts/test.sh runs this after the main
# suite; README "Sanitizers and fuzzing"):
#
#   asan  build-asan/  GCC, ASan+UBSan: unit, preload and a few e2e tests
#   tsan  build-tsan/  GCC, TSan: unit tests and the e2e tests with threads
#   fuzz  build-fuzz/  clang-14 libFuzzer targets, CHAKRA_FUZZ_SECONDS each
#
#   scripts/test-variants.sh [asan] [tsan] [fuzz]    (default: all three)
#
# Sanitizer builds compile -O1 -g1 (line tables for the reports): the
# variants exist to find bugs, not to time anything, and this halves their
# build time on CI's 2 cores. Only the targets the chosen tests need are
# built. Prints each part's time; exits non-zero when any part failed.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
python=$(python3 -c 'import sys; print(sys.executable)')
jobs=$(nproc)
parts=("$@")
[ ${#parts[@]} -gt 0 ] || parts=(asan tsan fuzz)
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
log() { echo "[variants] $*"; }

# What each sanitizer variant runs, as a CTest regex, and why:
# - unit: every pure stage and tool, in-process (leaks checked too);
# - preload: exports, RUNPATH (our dlopen entry built with the sanitizer's
#   flags), inert processes, README table. preload.bridge_load is left out:
#   it needs a second copy of the bridge built (chakra_mismatch_bridge), the
#   slowest target, and the e2e tests below load the real bridge anyway;
# - e2e.window (every schedule, a capture per case: the stepping thread,
#   the background writer, publishing), e2e.exit_and_files (exit paths),
#   e2e.signals (signal handoff, the watcher thread);
# - tools.check and tools.link: the readers and the linker on real and
#   golden traces, with the CLI's rank threads.
# TSan runs the parts with threads: the unit tests (rank pools of check,
# link and report), the captures (writer thread), the signal handoff (the
# relay's watcher, the torch.distributed watch thread) and the fork tests
# (children forked while other threads run ops; TSan runs them with
# die_after_fork=0, see tests/support/chakra_test.py).
# (GoogleTest names start with a capital; CTest's own tests are label.name.)
# - unit.cupti_decoder.*, unit.fake_cupti_selftest and e2e.cupti: the CUPTI
#   collector (decode thread, CUPTI's buffer callbacks on the double's
#   worker thread, the op-span pushes) on a real job.
asan_tests='^[A-Z]|^unit\.|^preload\.(exports|runpath|inert|readme_vars)$|^e2e\.(window|exit_and_files|signals|cupti)$|^tools\.(check|link)$'
tsan_tests='^[A-Z]|^unit\.|^preload\.(runpath|inert)$|^e2e\.(window|signals|fork|cupti)$'
san_targets=(chakrashim chakrashim_torch chakrashim_cli chakrashim_unit_tests chakra_runpath_host
             chakra_fixture_outer chakra_fixture_dep chakra_naive_wrapper chakra_thread_count
             chakrashim_cupti_decoder_tests chakra_fake_cupti chakra_fake_cupti_selftest
             chakra_fake_cuda)

# Configures (once) and builds DIR with the extra cmake args, then the targets.
build() {
  local dir=$1; shift
  local targets=()
  while [ "$1" != "--" ]; do targets+=("$1"); shift; done
  shift
  if [ ! -f "$dir/CMakeCache.txt" ]; then
    cmake -S "$root" -B "$dir" "${generator[@]}" -DPython3_EXECUTABLE="$python" "$@" >/dev/null || return 1
  fi
  cmake --build "$dir" -j "$jobs" --target "${targets[@]}"
}

san_flags=(-DCMAKE_BUILD_TYPE=Debug "-DCMAKE_CXX_FLAGS_DEBUG=-O1 -g1" "-DCMAKE_C_FLAGS_DEBUG=-O1 -g1")

run_asan() {
  build "$root/build-asan" "${san_targets[@]}" -- "${san_flags[@]}" "-DCHAKRA_SANITIZE=address;undefined" &&
    ctest --test-dir "$root/build-asan" --output-on-failure -j "$jobs" -R "$asan_tests"
}
run_tsan() {
  build "$root/build-tsan" "${san_targets[@]}" -- "${san_flags[@]}" -DCHAKRA_SANITIZE=thread &&
    ctest --test-dir "$root/build-tsan" --output-on-failure -j "$jobs" -R "$tsan_tests"
}
run_fuzz() {
  # No torch: the fuzz targets link only the pure libraries.
  CC=clang-14 CXX=clang++-14 build "$root/build-fuzz" chakra_fuzzers -- \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCHAKRA_FUZZ=ON -DCHAKRA_WITH_TORCH=OFF &&
    ctest --test-dir "$root/build-fuzz" --output-on-failure -j "$jobs" -L fuzz
}

status=0
summary=()
for part in "${parts[@]}"; do
  case "$part" in asan|tsan|fuzz) ;; *) echo "test-variants.sh: unknown part $part" >&2; exit 2 ;; esac
  start=$(date +%s)
  log "$part: start"
  if "run_$part"; then result=ok; else result=FAILED; status=1; fi
  summary+=("$part $result $(( $(date +%s) - start )) s")
  log "$part: $result in $(( $(date +%s) - start )) s"
done
for line in "${summary[@]}"; do log "$line"; done
exit $status
