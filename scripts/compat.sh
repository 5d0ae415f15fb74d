#!/usr/bin/env bash
# Builds chakrashim against each torch version a job may bring and runs an
# end-to-end subset against it (issue #17), one version at a time, so that
# disk use stays bounded: per version a fresh virtual environment, torch from
# PyPI (the CUDA build most users have), a Release build of the core, the
# bridge and the CLI in a build folder of its own, the subset, one table row,
# then the environment and the build are removed.
#
#   scripts/compat.sh [options] [VERSION...]
#
# VERSION defaults to 2.4.1 2.6.0 2.9.1 2.11.0 2.13.0 2.15.0.
#
# Every configure hides the CUDA toolkit (no nvcc on PATH, no CUDA_HOME,
# CMake told to ignore /usr/local/cuda*) and passes no torch option: what a
# cluster login node or a CPU build container sees. A CUDA torch's own CMake
# config cannot configure there, so each row also tests the fallback to the
# minimal config (cmake/ChakraTorch.cmake, issue #25); the row's "config"
# column says which config the build used.
#
# The e2e subset (tests/e2e, run directly with CTest's environment): the
# window, signals, fork, children, a 2-rank torchrun, the libcupti test
# double, module scopes (torch's global module hooks) and torch.optim's step
# hooks (under that torch's Dynamo, and a nested step); then one capture
# of examples/train_tiny.py under the shim, with `chakrashim check` and
# `chakrashim link` on it.
#
# options:
#   --scratch DIR    where environments and builds go (default /tmp/chakra-compat);
#                    each version's is removed after its row
#   --python PATH    the Python to make environments from (default python3)
#   --jobs N         build jobs (default 2)
#   --keep           keep the last version's environment and build
#   --no-e2e         build only (and the one capture)
#   --toolkit        do not hide the CUDA toolkit (torch's own config may then work)
#   --table FILE     also append each row to FILE
#
# Exit status: 0 every version passed, 1 some failed, 2 usage.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
scratch=/tmp/chakra-compat python=python3 jobs=2 keep=0 e2e=1 hide_toolkit=1 table=""
versions=()
usage() { sed -n '2,35p' "$0" | sed 's/^# \{0,1\}//'; }
need_arg() { [ "$1" -ge 2 ] || { echo "compat.sh: $2 needs a value (see --help)" >&2; exit 2; }; }
while [ $# -gt 0 ]; do
  case "$1" in
    --scratch) need_arg $# "$1"; scratch=$2; shift ;;
    --python) need_arg $# "$1"; python=$2; shift ;;
    --jobs) need_arg $# "$1"; jobs=$2; shift ;;
    --keep) keep=1 ;;
    --no-e2e) e2e=0 ;;
    --toolkit) hide_toolkit=0 ;;
    --table) need_arg $# "$1"; table=$2; shift ;;
    -h|--help) usage; exit 0 ;;
    -*) echo "compat.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) [[ "$1" =~ ^[0-9]+\.[0-9]+(\.[0-9]+)?$ ]] || { echo "compat.sh: '$1' is not a torch version like 2.6.0 (see --help)" >&2; exit 2; }
       versions+=("$1") ;;
  esac
  shift
done
case "$jobs" in ''|*[!0-9]*) echo "compat.sh: --jobs '$jobs' is not a number (see --help)" >&2; exit 2 ;; esac
[ ${#versions[@]} -gt 0 ] || versions=(2.4.1 2.6.0 2.9.1 2.11.0 2.13.0 2.15.0)
mkdir -p "$scratch" && scratch=$(cd "$scratch" && pwd)
commit=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)
git -C "$root" diff --quiet HEAD 2>/dev/null || commit="$commit+dirty"

log() { printf '[compat %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

# The e2e subset: FILE:PATTERN (unittest -k), chosen to cover each of the
# issue's areas in a few minutes per version (the whole files take ~25 min).
subset=(
  "test_window.py:test_a_plain_loop_keeps_exactly_start_to_end"
  "test_window.py:test_the_schedule_2_9_1_2"
  "test_signals.py:test_sigterm_finalizes_the_files_and_the_job_dies_of_sigterm"
  "test_signals.py:test_the_flush_signal_writes_the_files_and_the_job_goes_on"
  "test_fork.py:test_dataloader_workers_forked_in_mid_window"
  "test_children.py:test_a_python_subprocess_running_torch_ops"
  "test_children.py:test_fork_pool_workers_running_ops"
  "test_launchers.py:test_torchrun_inside_chakra_run_writes_one_pair_per_rank"
  "test_cupti.py:test_kernels_and_memcpys_are_linked_to_their_launches_and_ops"
  "test_cupti.py:test_check_reads_the_gpu_side"
  "test_module_scopes.py:test_every_module_call_is_a_scope_in_both_files_inside_the_window_only"
  "test_step_counting.py:test_a_compiled_optimizer_step_sees_no_hook_of_ours"
  "test_step_counting.py:test_a_nested_step_ended_by_an_exception_leaves_the_outer_one_a_step"
)

# The environment of a configure that cannot see a CUDA toolkit.
no_toolkit_env() {
  local p="" d
  IFS=: read -ra dirs <<<"$PATH"
  for d in "${dirs[@]}"; do
    [ -x "$d/nvcc" ] && continue
    p=${p:+$p:}$d
  done
  env -u CUDA_HOME -u CUDA_PATH -u CUDA_ROOT -u CUDACXX -u CUDAToolkit_ROOT PATH="$p" "$@"
}
# torch's config runs in a probe project of its own (cmake/ChakraTorch.cmake),
# which inherits the environment above but none of our -D flags.
no_toolkit_flags=(-DCMAKE_IGNORE_PREFIX_PATH="/usr/local/cuda;/usr/local/cuda-12;/usr/local/cuda-13;/opt/cuda")

row() {
  local line
  line=$(printf '| %s | %s | %s | %s | %s | %s |' "$@")
  echo "$line"
  [ -z "$table" ] || echo "$line" >>"$table"
}
echo "| torch | ET schema | config | build | e2e | commit |"
echo "|---|---|---|---|---|---|"
overall=0

for v in "${versions[@]}"; do
  t0=$SECONDS
  venv=$scratch/venv-$v build=$scratch/build-$v logs=$scratch/logs-$v
  rm -rf "$venv" "$build" "$logs"; mkdir -p "$logs"
  schema="?" config="?" built=FAIL result="not run"
  log "torch $v: environment $venv (logs in $logs)"
  if ! "$python" -m venv "$venv" >"$logs/venv.log" 2>&1; then
    row "$v" "$schema" "$config" "FAIL (venv: $(tail -n 1 "$logs/venv.log"))" "not run" "$commit"; overall=1; continue
  fi
  py=$venv/bin/python
  # The system's pip constraints may cap torch (a machine-local cache of
  # wheels); this environment wants exactly $v, so they are lifted for these
  # pip calls only.
  log "torch $v: pip install torch==$v"
  if ! PIP_CONSTRAINT=/dev/null "$py" -m pip install --quiet "torch==$v" numpy >"$logs/pip.log" 2>&1; then
    row "$v" "$schema" "$config" "FAIL (pip: $(grep -m1 -E 'ERROR' "$logs/pip.log" || tail -n 1 "$logs/pip.log"))" "not run" "$commit"
    overall=1; rm -rf "$venv"; continue
  fi
  log "torch $v: installed in $((SECONDS - t0))s ($("$py" -c 'import torch; print(torch.__version__, "cuda", torch.version.cuda)' 2>&1 | tail -n 1))"

  cfg=(-S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DPython3_EXECUTABLE="$py")
  [ -d /usr/local/cuda/include ] && [ -f /usr/local/cuda/include/cupti_activity.h ] &&
    cfg+=(-DCHAKRA_CUPTI_INCLUDE_DIR=/usr/local/cuda/include)
  command -v ccache >/dev/null && cfg+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
  if [ "$hide_toolkit" = 1 ]; then
    no_toolkit_env cmake "${cfg[@]}" "${no_toolkit_flags[@]}" >"$logs/configure.log" 2>&1
  else
    cmake "${cfg[@]}" >"$logs/configure.log" 2>&1
  fi
  rc=$?
  config=$(sed -n 's/.*chakrashim: torch .* (\([a-z]*\) config).*/\1/p' "$logs/configure.log" | tail -n 1)
  grep -q "using the minimal config instead" "$logs/configure.log" && config="$config (fallback)"
  config=${config:-?}
  # A CUDA torch with the toolkit hidden must configure through the fallback,
  # with no option given (issue #25): anything else fails the row, so that
  # the row proves the fallback rather than only reporting it.
  cuda=$("$py" -c 'import torch; print(torch.version.cuda or "")' 2>/dev/null | tail -n 1)
  if [ $rc -eq 0 ] && [ "$hide_toolkit" = 1 ] && [ -n "$cuda" ] && [ "$config" != "minimal (fallback)" ]; then
    rc=1
    echo "compat: a CUDA $cuda torch with the toolkit hidden configured with the '$config' config," \
         "not through the minimal-config fallback" >>"$logs/configure.log"
  fi
  if [ $rc -ne 0 ]; then
    built="FAIL (configure: $(grep -m1 -A1 -E 'CMake Error|^compat:' "$logs/configure.log" | tr '\n' ' ' | cut -c1-160))"
  else
    log "torch $v: configured ($config config); building"
    # The e2e subset needs the core, the bridge, the CLI and the test doubles;
    # no unit tests are built.
    if ninja -C "$build" -j "$jobs" chakrashim chakrashim_torch chakrashim_cli chakra_fake_cupti \
         chakra_fake_cuda chakra_thread_count >"$logs/build.log" 2>&1; then
      built=ok
    else
      built="FAIL (build: $(grep -m1 -E 'error:' "$logs/build.log" | cut -c1-200))"
    fi
  fi
  if [ "$built" = ok ]; then
    # One capture of the example job, then check and link on it.
    cli=$(find "$build/tools" -maxdepth 1 -name chakrashim -type f | head -n 1)
    preload=$build/shim/libchakrashim.so
    [ -f "$preload" ] || preload=$(find "$build/shim" -name libchakrashim.so | head -n 1)
    traces=$logs/traces
    capture_ok=1
    env -u LD_PRELOAD CHAKRA_PROFILE=1 CHAKRA_START_STEP=3 CHAKRA_END_STEP=5 CHAKRA_TRACE_DIR="$traces" \
      LD_PRELOAD="$preload" "$py" "$root/examples/train_tiny.py" --steps 8 >"$logs/capture.log" 2>&1 || capture_ok=0
    grep -q "captured steps \[3-5\]" "$logs/capture.log" || capture_ok=0
    "$cli" check "$traces" >"$logs/check.log" 2>&1 || capture_ok=0
    "$cli" link "$traces" >"$logs/link.log" 2>&1 || capture_ok=0
    schema=$("$py" -c 'import json,sys; print(json.load(open(sys.argv[1]))["schema"])' \
             "$traces/0_chakra/rank-0.json" 2>/dev/null || echo "?")
    if [ $capture_ok = 0 ]; then
      result="FAIL (capture/check/link: see $logs)"
    elif [ "$e2e" = 0 ]; then
      result="capture+check+link ok (no e2e)"
    else
      # CTest's environment for the e2e tests (paths of this build).
      ctest_env=$(cd "$build" && ctest --show-only=json-v1 -R '^e2e\.cupti$' 2>/dev/null |
        "$py" -c 'import json,sys,shlex
t=json.load(sys.stdin)["tests"][0]
for p in t["properties"]:
    if p["name"]=="ENVIRONMENT": print(" ".join(shlex.quote(e) for e in p["value"]))')
      failed=() passed=0
      for item in "${subset[@]}"; do
        file=${item%%:*} pat=${item#*:}
        log "torch $v: e2e $file -k $pat"
        if eval "env $ctest_env" "$py" "$root/tests/e2e/$file" -k "$pat" >>"$logs/e2e.log" 2>&1; then
          passed=$((passed + 1))
        else
          failed+=("${file#test_}:${pat#test_}")
        fi
      done
      if [ ${#failed[@]} -eq 0 ]; then
        result="pass ($passed/${#subset[@]} + capture, check, link)"
      else
        result="FAIL ${#failed[@]}/${#subset[@]}: ${failed[*]}"
      fi
    fi
  fi
  case "$built $result" in ok\ pass*|ok\ capture*) ;; *) overall=1 ;; esac
  row "$v" "$schema" "$config" "$built" "$result ($(( (SECONDS - t0) / 60 )) min)" "$commit"
  if [ "$keep" = 1 ] && [ "$v" = "${versions[-1]}" ]; then
    log "torch $v: kept $venv and $build"
  else
    rm -rf "$venv" "$build"
  fi
done
exit $overall
