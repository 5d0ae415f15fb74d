#!/usr/bin/env bash
# Proves the GPU path on a real GPU (issues #8, #20), in one command of a few
# minutes: builds chakrashim and its torch bridge against this machine's
# torch, runs each job of examples/train_cuda.py (eager; compiled: a
# torch.compile'd trunk, Triton kernels by cuLaunchKernel; graphs: the whole
# step replayed from a CUDA graph) under the shim over a 3-step window and
# again under torch.profiler over the same steps, checks each device trace
# and compares the two, and prints one summary line per job and an overall
# one (scripts/gpu_check/analyze.py).
#
#   scripts/gpu-check.sh [--out DIR] [options]     on a GPU machine
#   scripts/gpu-check.sh --dry [options]           on a CPU: syntax, tools, build, CPU run
#   scripts/gpu-check.sh --prepare-deps            copy the header-only deps, then stop
#
# options:
#   --out DIR        where results go (default $OUT if set, else ./gpu-check-out)
#   --build DIR      build folder (default build-gpu-check, or build-gpu-check-dry)
#   --deps DIR       header-only deps folder (default .gpu-deps in the repo)
#   --python PATH    the Python whose torch to build for and run (default python3)
#   --steps N        training steps (default 200; --dry 10)
#   --window S E     captured steps (default 40 42; --dry 4 5)
#   --pack/--no-pack leave only gpu-check.log, summary.txt and results.tar.gz
#                    in DIR (default: --pack when DIR came from $OUT)
#   --jobs N         build jobs (default nproc)
#   --train-jobs L   the train_cuda.py jobs, comma-separated (default
#                    eager,compiled,graphs; --dry: graphs is n/a on a CPU)
#   --et-recorder R  native or torch: CHAKRA_ET_RECORDER for the shim runs
#                    (default: unset, torch's observer)
#   --no-dry-compiled  --dry: skip the compiled job (--dry compiles only the
#                    MLP block: Inductor's C++ compile of the trunk takes
#                    over a minute on a small CPU)
#   --torch-min      build with the minimal torch config (cmake/torch_minimal:
#                    libtorch_cpu and c10, no CUDA) instead of torch's own
#                    CMake config; the build also falls back to it by itself
#                    when a CUDA torch's config cannot configure
#                    (cmake/ChakraTorch.cmake)
#
# Exit status: 0 PASS, 1 FAIL (summary.txt says which criteria), 2 usage.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
t0=$SECONDS
mode=gpu
out="" build="" deps="$root/.gpu-deps" python=python3 steps="" win_s="" win_e="" pack="" jobs="" torch_min=0
train_jobs=eager,compiled,graphs et_recorder="" dry_compiled=1

usage() { sed -n '2,38p' "$0" | sed 's/^# \{0,1\}//'; }
# need_args COUNT-LEFT COUNT-NEEDED OPTION WHAT: a usage error when too few follow.
need_args() { [ "$1" -ge "$2" ] || { echo "gpu-check.sh: $3 needs $4" >&2; exit 2; }; }
while [ $# -gt 0 ]; do
  case "$1" in
    --dry) mode=dry ;;
    --prepare-deps) mode=deps ;;
    --out) need_args $# 2 "$1" DIR; out=$2; shift ;;
    --build) need_args $# 2 "$1" DIR; build=$2; shift ;;
    --deps) need_args $# 2 "$1" DIR; deps=$2; shift ;;
    --python) need_args $# 2 "$1" PATH; python=$2; shift ;;
    --steps) need_args $# 2 "$1" N; steps=$2; shift ;;
    --window) need_args $# 3 "$1" "S E"; win_s=$2; win_e=$3; shift 2 ;;
    --pack) pack=1 ;;
    --no-pack) pack=0 ;;
    --jobs) need_args $# 2 "$1" N; jobs=$2; shift ;;
    --torch-min) torch_min=1 ;;
    --train-jobs) need_args $# 2 "$1" LIST; train_jobs=$2; shift ;;
    --et-recorder) need_args $# 2 "$1" "native or torch"; et_recorder=$2; shift ;;
    --no-dry-compiled) dry_compiled=0 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "gpu-check.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
for n in "$steps" "$win_s" "$win_e" "$jobs"; do
  case "$n" in ''|*[!0-9]*) [ -z "$n" ] || { echo "gpu-check.sh: '$n' is not a number" >&2; exit 2; } ;; esac
done
case "$et_recorder" in ''|native|torch) ;; *) echo "gpu-check.sh: --et-recorder takes native or torch, not '$et_recorder'" >&2; exit 2 ;; esac
for j in ${train_jobs//,/ }; do
  case "$j" in eager|compiled|graphs) ;; *) echo "gpu-check.sh: unknown job '$j' in --train-jobs (eager, compiled, graphs)" >&2; exit 2 ;; esac
done
[ -n "${train_jobs//,/}" ] || { echo "gpu-check.sh: --train-jobs needs at least one job" >&2; exit 2; }
if [ "$mode" = dry ]; then
  steps=${steps:-10}; win_s=${win_s:-4}; win_e=${win_e:-5}; device=cpu; batch=8
  # Inductor's C++ compile of the whole trunk takes over a minute on 2 cores.
  compile_part=mlp
  build=${build:-$root/build-gpu-check-dry}
else
  steps=${steps:-200}; win_s=${win_s:-40}; win_e=${win_e:-42}; device=cuda; batch=64
  compile_part=trunk
  build=${build:-$root/build-gpu-check}
fi
if [ -z "$out" ]; then
  if [ -n "${OUT:-}" ]; then out=$OUT; pack=${pack:-1}; else out=$PWD/gpu-check-out; fi
fi
pack=${pack:-0}
jobs=${jobs:-$(nproc 2>/dev/null || echo 2)}
# Absolute paths: the build's prefix goes into LD_PRELOAD, the deps into CMake.
abspath() { mkdir -p "$(dirname "$1")" && echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }
build=$(abspath "$build")
deps=$(abspath "$deps")
# Steps: before the window skips the first quarter (warm-up, lazy init), after
# it skips the first eighth of what is left (the writer finishing the files).
before_a=$(( win_s / 4 > 1 ? win_s / 4 : 1 )); before_b=$(( win_s - 1 ))
after_a=$(( win_e + 1 + (steps - win_e) / 8 )); after_b=$(( steps - 1 ))
if [ "$mode" != deps ] && { [ "$win_s" -lt 2 ] || [ "$win_e" -lt "$win_s" ] || [ "$after_a" -gt "$after_b" ]; }; then
  echo "gpu-check.sh: need 2 <= S <= E and a few steps after E (--steps $steps --window $win_s $win_e)" >&2
  exit 2
fi

if [ "$mode" = deps ]; then
  logfile=/dev/null
else
  mkdir -p "$out"
  out=$(cd "$out" && pwd)
  logfile=$out/gpu-check.log
fi
run=$out/run
logs=$run/logs
stage=start
finished=0

log() {
  local line
  line=$(printf '[gpu-check %s +%ds] %s' "$(date +%H:%M:%S)" "$((SECONDS - t0))" "$*")
  echo "$line"
  echo "$line" >>"$logfile"
}
# The last lines of a log, indented, when a stage fails.
show_tail() { [ -f "$1" ] && tail -n "${2:-40}" "$1" | sed 's/^/    | /' | tee -a "$logfile"; return 0; }
fail() {
  log "FAIL at $stage: $*"
  if [ "$mode" != deps ]; then
    printf 'gpu-check: FAIL stage=%s: %s mode=%s\n' "$stage" "$*" "$mode" >"$out/summary.txt"
    cat "$out/summary.txt"
    rm -f "$out/summary.txt.parts"
  fi
  finished=1
  exit 1
}
pack_results() {
  [ "$pack" = 1 ] && [ "$mode" != deps ] && [ -d "$run" ] || return 0
  tar -C "$out" -czf "$out/results.tar.gz" run
  # A returned file may be at most 16 MiB: past that, the traces go apart so
  # that the logs and figures still come back.
  if [ "$(wc -c <"$out/results.tar.gz")" -gt $((15 * 1024 * 1024)) ]; then
    tar -C "$out" -czf "$out/results.tar.gz" --exclude='run/shim' --exclude='run/profiler' \
      --exclude='run/*/shim' --exclude='run/*/profiler' run
    (cd "$out" && tar -czf traces.tar.gz run/shim run/profiler $(ls -d run/*/shim run/*/profiler 2>/dev/null))
  fi
  rm -rf "$run"
}
on_exit() {
  local rc=$?
  if [ "$finished" = 0 ] && [ "$mode" != deps ]; then
    log "FAIL at $stage: unexpected exit (status $rc)"
    printf 'gpu-check: FAIL stage=%s: unexpected exit (status %s) mode=%s\n' "$stage" "$rc" "$mode" >"$out/summary.txt"
    rm -f "$out/summary.txt.parts"
  fi
  pack_results || echo "gpu-check: packing the results failed" >&2
}
trap on_exit EXIT
# A time limit's TERM (or ^C) still leaves the summary and the packed results.
trap 'stage="$stage (signal TERM)"; exit 143' TERM
trap 'stage="$stage (signal INT)"; exit 130' INT

# --- 0. our own syntax ---------------------------------------------------------
stage=syntax
bash -n "$0" || fail "bash -n $0"

# --- header-only deps: spdlog, fmt, nlohmann_json, zlib's headers ----------------
# The GPU machine has no Debian -dev packages: this folder is copied from a
# machine that has them and travels with the tree (ignored by git).
deps_files=(spdlog/spdlog.h spdlog/fmt/fmt.h fmt/format.h fmt/format-inl.h fmt/core.h
            nlohmann/json.hpp zlib.h zconf.h)
deps_complete() {
  local f
  for f in "${deps_files[@]}"; do [ -f "$deps/include/$f" ] || return 1; done
}
prepare_deps() {
  if deps_complete; then
    log "deps: using $deps/include ($(head -n 1 "$deps/SOURCE.txt" 2>/dev/null || echo 'no SOURCE.txt'))"
    return 0
  fi
  local d zconf=/usr/include/zconf.h tmp
  [ -f "$zconf" ] || zconf=/usr/include/$(uname -m)-linux-gnu/zconf.h
  for d in /usr/include/spdlog /usr/include/fmt /usr/include/nlohmann /usr/include/zlib.h "$zconf"; do
    [ -e "$d" ] || fail "$deps/include is incomplete and $d is missing here: run 'scripts/gpu-check.sh --prepare-deps' on a machine with libspdlog-dev, libfmt-dev, nlohmann-json3-dev and zlib1g-dev, and bring $deps along"
  done
  tmp=$(mktemp -d "$deps.tmp.XXXXXX")
  mkdir -p "$tmp/include"
  cp -R /usr/include/spdlog /usr/include/fmt /usr/include/nlohmann "$tmp/include/"
  cp /usr/include/zlib.h "$zconf" "$tmp/include/"
  {
    echo "copied from $(hostname) on $(date -u +%Y-%m-%dT%H:%M:%SZ) by scripts/gpu-check.sh"
    dpkg-query -W libspdlog-dev libfmt-dev nlohmann-json3-dev zlib1g-dev 2>/dev/null || true
  } >"$tmp/SOURCE.txt"
  rm -rf "$deps"
  mv "$tmp" "$deps"
  deps_complete || fail "$deps/include is still incomplete after copying"
  log "deps: copied spdlog, fmt, nlohmann and zlib's headers into $deps/include ($(du -sh "$deps" | cut -f1))"
}

if [ "$mode" = deps ]; then
  stage=deps
  prepare_deps
  finished=1
  exit 0
fi

rm -rf "$run" "$out/summary.txt" "$out/summary.txt.parts" "$out/results.tar.gz" "$out/traces.tar.gz"
mkdir -p "$logs"
: >"$logfile"
log "mode $mode: jobs $train_jobs, ET recorder ${et_recorder:-native (default)}, steps $steps, window $win_s..$win_e, step times before $before_a..$before_b, after $after_a..$after_b"
log "repo $root ($(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo 'no git')), out $out, build $build"

# --- 1. tools ----------------------------------------------------------------------
stage=tools
need() { command -v "$1" >/dev/null 2>&1 || fail "'$1' is not on PATH${2:+ ($2)}"; }
need cmake; need ninja; need tar; need gzip
cxx=${CXX:-$(command -v c++ || command -v g++ || true)}
[ -n "$cxx" ] || fail "no C++ compiler (c++ or g++) on PATH"
command -v "$python" >/dev/null 2>&1 || [ -x "$python" ] || fail "python '$python' not found"
log "cmake: $(cmake --version | head -n 1)"
log "ninja: $(ninja --version)"
log "c++: $("$cxx" --version | head -n 1)"
timeout_cmd=()
if command -v timeout >/dev/null 2>&1; then timeout_cmd=(timeout --kill-after=10); else log "no 'timeout': steps run without a time limit"; fi
with_limit() { local s=$1; shift; if [ ${#timeout_cmd[@]} -gt 0 ]; then "${timeout_cmd[@]}" "$s" "$@"; else "$@"; fi; }

# --- 2. Python, torch, CUDA toolkit --------------------------------------------------------
stage=python
"$python" "$here/gpu_check/locate.py" >"$logs/locate.txt" 2>"$logs/locate.err" ||
  { show_tail "$logs/locate.err"; fail "scripts/gpu_check/locate.py failed"; }
declare -A loc=()
while IFS= read -r line; do
  case "$line" in *=*) loc["${line%%=*}"]="${line#*=}" ;; esac
done <"$logs/locate.txt"
py=${loc[python]}
[ -z "${loc[torch_error]:-}" ] || fail "$py cannot import torch: ${loc[torch_error]}"
log "python: $py ${loc[python_version]}"
log "torch: ${loc[torch_version]} (CUDA ${loc[torch_cuda]:-none}) at ${loc[torch_dir]}"
if [ -n "${loc[nvcc]}" ]; then
  log "nvcc: ${loc[nvcc]} ${loc[nvcc_version]} (toolkit ${loc[cuda_root]})"
  log "cuda: include ${loc[cuda_include]:-not found}, cudart ${loc[cudart]:-not found}, nvrtc ${loc[nvrtc]:-not found}"
  log "cupti: headers in ${loc[cupti_include]:-not found}"
elif [ "$mode" = gpu ]; then
  # A CUDA torch's own CMake config needs the toolkit: go straight to minimal.
  log "warning: no nvcc (PATH, CUDA_HOME, /usr/local/cuda*, the nvidia pip wheels): building with the minimal torch config (cmake/torch_minimal)"
  torch_min=1
else
  log "nvcc: not found (the GPU run needs it; the dry run goes on without)"
fi
[ -n "${loc[libz]}" ] || fail "no libz.so.1 found (ldconfig -p, /lib*, /usr/lib*)"
log "zlib: ${loc[libz]} with the carried header"
if [ "$mode" = gpu ]; then
  [ -n "${loc[torch_cuda]}" ] || fail "torch ${loc[torch_version]} is a CPU build"
  [ "${loc[cuda_available]}" = 1 ] || fail "torch.cuda.is_available() is False: no GPU seen"
  log "gpu: ${loc[gpu_name]} (sm ${loc[gpu_arch]})"
  [ -n "${loc[cupti_include]}" ] || log "warning: no cupti_activity.h found; the collector's CMake searches on its own"
  if command -v nvidia-smi >/dev/null 2>&1 &&
     nvidia-smi --query-gpu=name,driver_version,memory.used,clocks.sm --format=csv,noheader >"$logs/nvidia-smi.txt" 2>&1; then
    log "nvidia-smi: $(head -n 1 "$logs/nvidia-smi.txt")"
  fi
fi

# --- 3. deps -----------------------------------------------------------------------------------------
stage=deps
prepare_deps

# --- 4. configure and build ------------------------------------------------------------------------
stage=configure
prefix=$build/prefix
# A unity build (eight sources a translation unit): half the compile time,
# on the GPU machine's short lease and in CI's --dry run alike; CI's main
# build compiles the libraries one source a unit, as users build them.
# Without `chakrashim convert` (protobuf): the check never runs it, the GPU
# machine's header-only deps folder has no protobuf, and where a system copy
# is found (as on CI's machine, in --dry) it would be built for nothing
# (about 30 s of CPU, issue #53) and read headers from outside $deps.
cmake_args=(-G Ninja -DCMAKE_BUILD_TYPE=Release -DCHAKRA_BUILD_TESTS=OFF -DCMAKE_UNITY_BUILD=ON
            -DCMAKE_DISABLE_FIND_PACKAGE_Protobuf=ON
            "-DPython3_EXECUTABLE=$py"
            "-DCHAKRA_HEADER_DEPS_DIR=$deps"
            "-DZLIB_INCLUDE_DIR=$deps/include" "-DZLIB_LIBRARY=${loc[libz]}")
[ -z "${loc[cupti_include]}" ] || cmake_args+=("-DCHAKRA_CUPTI_INCLUDE_DIR=${loc[cupti_include]}")
# --dry compiles without optimizing (Release's flags but -O0): it proves the
# configuration, the deps folder (no system header read: below), the unity
# build, the link and the install that the GPU run will use, and runs that
# build; how well the compiler optimizes is not something a CPU run can
# judge, and -O3 was half of CI's dry build (about 85 s of CPU, issue #53).
# Without -Werror, the level cannot make the build pass or fail.
if [ "$mode" = dry ]; then
  cmake_args+=("-DCMAKE_CXX_FLAGS_RELEASE=-O0 -DNDEBUG" "-DCMAKE_C_FLAGS_RELEASE=-O0 -DNDEBUG")
fi
# CUPTI's headers include cuda.h; where they live apart from it (a standard
# toolkit's extras/CUPTI/include), the toolkit's include folder comes last.
if [ -n "${loc[cupti_include]}" ] && [ "${loc[cupti_has_cuda_h]}" = 0 ] && [ -n "${loc[cuda_include]}" ]; then
  cmake_args+=("-DCMAKE_CXX_FLAGS=-idirafter ${loc[cuda_include]}")
fi
if [ -n "${loc[nvcc]}" ]; then
  # For the CUDA torch's own config (Caffe2's cuda.cmake): the real nvcc and
  # toolkit (on PATH there may be a wrapper), libraries a toolkit assembled
  # from pip wheels has only as libfoo.so.N, C++17 for its CUDA checks, and a
  # named architecture instead of a GPU probe.
  cmake_args+=("-DCUDA_TOOLKIT_ROOT_DIR=${loc[cuda_root]}" "-DCUDAToolkit_ROOT=${loc[cuda_root]}"
               "-DCMAKE_CUDA_COMPILER=${loc[nvcc]}" -DCMAKE_CUDA_STANDARD=17)
  [ -z "${loc[cudart]}" ] || cmake_args+=("-DCUDA_CUDART_LIBRARY=${loc[cudart]}" "-DCUDA_cudart_LIBRARY=${loc[cudart]}")
  [ -z "${loc[nvrtc]}" ] || cmake_args+=("-DCUDA_nvrtc_LIBRARY=${loc[nvrtc]}")
  export TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST:-${loc[gpu_arch]:-9.0}}
fi
# CMake 4 refuses configs that declare compatibility with CMake < 3.5; a
# third-party one (torch's, CUDA's) must not stop the build for that.
export CMAKE_POLICY_VERSION_MINIMUM=${CMAKE_POLICY_VERSION_MINIMUM:-3.5}
mkdir -p "$build"
rm -rf "$build/CMakeCache.txt" "$build/CMakeFiles"
torch_config=torch
configure() { with_limit 300 cmake -S "$root" -B "$build" "${cmake_args[@]}" "$@"; }
log "configure: cmake -S $root -B $build ${cmake_args[*]}"
if [ "$torch_min" = 0 ]; then
  if configure >"$logs/configure.log" 2>&1; then
    torch_config=torch
  else
    show_tail "$logs/configure.log" 30
    [ -n "${loc[torch_cuda]}" ] || fail "cmake configure failed (logs/configure.log)"
    # A CUDA torch's own config locates the whole toolkit; the bridge needs
    # only libtorch_cpu and c10.
    log "configure with torch's own CMake config failed; retrying with the minimal torch config (cmake/torch_minimal: libtorch_cpu + c10, no CUDA)"
    torch_config=""
  fi
else
  log "configure: --torch-min: with the minimal torch config (cmake/torch_minimal: libtorch_cpu + c10, no CUDA)"
  torch_config=""
fi
if [ -z "$torch_config" ]; then
  torch_config=torch_min
  rm -rf "$build/CMakeCache.txt" "$build/CMakeFiles"
  configure -DCHAKRA_TORCH_CONFIG=minimal >"$logs/configure-torch_min.log" 2>&1 ||
    { show_tail "$logs/configure-torch_min.log" 30; fail "cmake configure with torch_min failed (logs/configure*.log)"; }
fi
log "configure: done with $torch_config's config ($(grep -h 'chakrashim: torch' "$logs"/configure*.log | head -n 1 | sed 's/^-- //' || true))"
{ grep -h -i 'cupti' "$logs"/configure*.log || true; } | sed 's/^-- //' | while IFS= read -r l; do log "configure: $l"; done

stage=build
log "build: cmake --build $build -j $jobs"
with_limit 900 cmake --build "$build" -j "$jobs" >"$logs/build.log" 2>&1 ||
  { show_tail "$logs/build.log" 40; fail "build failed (logs/build.log)"; }
with_limit 120 cmake --install "$build" --prefix "$prefix" >"$logs/install.log" 2>&1 ||
  { show_tail "$logs/install.log"; fail "install failed (logs/install.log)"; }
for f in lib/libchakrashim.so lib/libchakrashim_core.so lib/libchakrashim_torch.so bin/chakrashim; do
  [ -f "$prefix/$f" ] || fail "the install has no $prefix/$f"
done
# Honesty of the deps folder: no header of ours may have come from the system.
if ninja -C "$build" -t deps >"$logs/deps.txt" 2>/dev/null; then
  leaked=$(grep -E '^\s+/usr/include/(spdlog|fmt|nlohmann)/|^\s+/usr/include/(zlib|zconf)\.h' "$logs/deps.txt" | sort -u | head -n 5 || true)
  [ -z "$leaked" ] || fail "the build read system headers instead of $deps: $(echo $leaked)"
fi
readelf -d "$prefix/lib/libchakrashim_torch.so" 2>/dev/null | grep NEEDED >"$logs/bridge-needed.txt" || true
log "build: done ($(grep -c . "$logs/build.log") lines of log; installed into $prefix; torch config: $torch_config)"

# --- 5. the jobs: each under the shim, then under torch.profiler, then judged -----------------
# No LD_PRELOAD or CHAKRA_* of the caller's: each run sets its own.
clean_env=(env -u LD_PRELOAD)
for v in $(env | sed -n 's/^\(CHAKRA_[A-Za-z0-9_]*\)=.*/\1/p'); do clean_env+=(-u "$v"); done
clean_env+=(PYTHONUNBUFFERED=1)
status=0
if [ "$mode" = dry ]; then
  stage=self-test
  "$py" "$here/gpu_check/analyze.py" --self-test >"$logs/self-test.log" 2>&1 ||
    { show_tail "$logs/self-test.log"; fail "analyze.py --self-test failed"; }
  log "analyze.py self-test: $(tail -n 1 "$logs/self-test.log")"
fi
: >"$out/summary.txt.parts"
verdicts=()

# run_job JOB: the job under the shim and under torch.profiler, checked and
# judged; eager's files stay where they always were (run/shim, run/check.json,
# ...), another job's go to run/JOB/ and logs/JOB-*.log.
run_job() {
  local job=$1 d=$run lp="" rc=0 marker=() label
  if [ "$job" != eager ]; then d=$run/$job; lp=$job-; fi
  label="[$job]"
  local job_cmd=("$root/examples/train_cuda.py" --device "$device" --batch "$batch" --steps "$steps" --job "$job"
                 --compile-part "$compile_part")
  # The graph job's step is its replay: no Python optimizer.step() runs.
  [ "$job" != graphs ] || marker=(CHAKRA_STEP_MARKER=train_step_graph)
  local recorder=()
  [ -z "$et_recorder" ] || recorder=(CHAKRA_ET_RECORDER="$et_recorder")

  stage=$job-shim-run
  log "$label shim run: steps $steps, capturing $win_s..$win_e under $prefix/lib/libchakrashim.so${et_recorder:+ (ET recorder $et_recorder)}"
  mkdir -p "$d/shim"
  with_limit 300 "${clean_env[@]}" CHAKRA_PROFILE=1 CHAKRA_TRACE_DIR="$d/shim" CHAKRA_JOB_ID=gpucheck \
    CHAKRA_START_STEP="$win_s" CHAKRA_END_STEP="$win_e" "${marker[@]}" "${recorder[@]}" \
    LD_PRELOAD="$prefix/lib/libchakrashim.so" \
    "$py" "${job_cmd[@]}" --step-times "$d/shim_times.json" >"$logs/${lp}shim-run.log" 2>&1 ||
    { show_tail "$logs/${lp}shim-run.log"; fail "$job under the shim failed (logs/${lp}shim-run.log)"; }
  { grep '^\[chakrashim' "$logs/${lp}shim-run.log" || true; } | while IFS= read -r l; do log "  $l"; done
  { find "$d/shim" -type f || true; } | sort | while IFS= read -r f; do log "  $(du -h "$f" | cut -f1)  ${f#"$out"/}"; done

  stage=$job-check
  "$prefix/bin/chakrashim" check "$d/shim" >"$logs/${lp}check.txt" 2>&1 || true
  "$prefix/bin/chakrashim" check "$d/shim" --json >"$d/check.json" 2>>"$logs/${lp}check.txt" || true
  while IFS= read -r l; do log "  check: $l"; done < <(tail -n 8 "$logs/${lp}check.txt")

  stage=$job-profiler-run
  log "$label torch.profiler run: the same job, profiling steps $win_s..$win_e"
  mkdir -p "$d/profiler"
  with_limit 300 "${clean_env[@]}" "$py" "${job_cmd[@]}" --torch-profiler "$win_s" "$win_e" \
    --profiler-trace "$d/profiler/trace.json" --step-times "$d/profiler_times.json" \
    >"$logs/${lp}profiler-run.log" 2>&1 ||
    { show_tail "$logs/${lp}profiler-run.log"; fail "$job under torch.profiler failed (logs/${lp}profiler-run.log)"; }
  log "  $(du -h "$d/profiler/trace.json" 2>/dev/null | cut -f1)  ${d#"$out"/}/profiler/trace.json"

  stage=$job-analyze
  log "$label analysis:"
  "$py" "$here/gpu_check/analyze.py" --capture "$d/shim" --check-json "$d/check.json" \
    --shim-times "$d/shim_times.json" --profiler-trace "$d/profiler/trace.json" \
    --profiler-times "$d/profiler_times.json" --window "$win_s" "$win_e" \
    --before "$before_a" "$before_b" --after "$after_a" "$after_b" \
    --mode "$([ "$mode" = dry ] && echo cpu || echo gpu)" --job "$job" \
    --summary-out "$d/summary.txt" --json-out "$d/analysis.json" >"$logs/${lp}analyze.log" 2>&1 || rc=$?
  if [ "$rc" -gt 1 ] || [ ! -s "$d/summary.txt" ]; then
    show_tail "$logs/${lp}analyze.log"; fail "analyze.py failed for $job (status $rc)"
  fi
  while IFS= read -r l; do log "  $l"; done <"$d/summary.txt"
  cat "$d/summary.txt" >>"$out/summary.txt.parts"
  if [ "$rc" = 0 ]; then verdicts+=("$job=PASS"); else verdicts+=("$job=FAIL"); status=1; fi
}

for job in ${train_jobs//,/ }; do
  if [ "$mode" = dry ] && [ "$job" = graphs ]; then
    log "[graphs] n/a (CPU): CUDA graphs need a GPU"
    echo "gpu-check: n/a job=graphs (CPU: CUDA graphs need a GPU)" >>"$out/summary.txt.parts"
    verdicts+=("graphs=n/a(CPU)")
    continue
  fi
  if [ "$mode" = dry ] && [ "$job" = compiled ] && [ "$dry_compiled" = 0 ]; then
    log "[compiled] skipped: --no-dry-compiled"
    echo "gpu-check: skipped job=compiled (--no-dry-compiled)" >>"$out/summary.txt.parts"
    verdicts+=("compiled=skipped")
    continue
  fi
  run_job "$job"
done
stage=verdict
overall="gpu-check: $([ "$status" = 0 ] && echo PASS || echo FAIL) jobs ${verdicts[*]} mode=$mode et_recorder=${et_recorder:-native}"
echo "$overall" >>"$out/summary.txt.parts"
mv "$out/summary.txt.parts" "$out/summary.txt"
finished=1
log "done in $((SECONDS - t0)) s: $([ "$status" = 0 ] && echo PASS || echo FAIL) (results in $out)"
cat "$out/summary.txt" >>"$logfile"
cat "$out/summary.txt"
exit "$status"
