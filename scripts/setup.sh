#!/usr/bin/env bash
# Installs what is missing, builds, and installs chakrashim into a prefix.
#
#   scripts/setup.sh [--build DIR] [--prefix DIR] [-- extra cmake args]
#
# Debian packages come from apt (only the missing ones), torch from PyPI
# pinned to 2.13.0 (a CPU build) when the Python on PATH has none. Safe to
# run again: it only does what is left to do.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
build=$root/build
prefix=""
cmake_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift ;;
    --prefix) prefix=$2; shift ;;
    --) shift; cmake_args=("$@"); break ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "setup.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
prefix=${prefix:-$build/prefix}
log() { echo "[setup] $*"; }

# --- Debian packages ---------------------------------------------------------
# Build: compilers, CMake, Ninja, binutils (readelf for the torch build-id).
# Libraries: spdlog/fmt and nlohmann_json (header-only), GoogleTest, zlib,
# protobuf (`chakrashim convert` writes Chakra's protobuf ET).
# clang-14 with its runtimes: sanitizer and fuzzer builds. Launchers for the
# end-to-end tests: Open MPI, and Slurm with munge (scripts/slurm/).
# chromium renders `chakrashim report --html` pages; `time` measures peak
# memory in the benchmarks; valgrind (callgrind) counts the span benchmark's
# instructions; gdb dumps the stacks of a hung soak run (scripts/soak.sh).
packages=(build-essential cmake ninja-build binutils pkg-config
          libspdlog-dev libfmt-dev nlohmann-json3-dev libgtest-dev libgmock-dev zlib1g-dev
          libprotobuf-dev protobuf-compiler
          clang-14 libclang-rt-14-dev
          openmpi-bin slurm-wlm munge
          chromium time valgrind gdb)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  log "installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
fi

# --- torch --------------------------------------------------------------------
# The real interpreter behind `python3` (which may be pyenv's shell shim).
python=$(python3 -c 'import sys; print(sys.executable)')
if ! "$python" -c 'import torch' 2>/dev/null; then
  log "installing torch==2.13.0 into $python"
  "$python" -m pip install -q torch==2.13.0
fi
log "torch $("$python" -c 'import torch; print(torch.__version__)') at $python"

# --- CUPTI ----------------------------------------------------------------------
# The collector needs CUPTI's headers (libcupti itself is dlopen'ed at run
# time). The CUDA toolkit's are used when the machine has one; else PyPI's
# CUDA 13 wheels (cupti_activity.h, and cuda.h from the runtime wheel) go
# into .deps/cupti-cu13. The decoder tests also walk buffers with CUDA 12's
# libcupti, from PyPI, into .deps/cupti-cu12 (unit.cupti_decoder.cuda12).
deps=$root/.deps
pip_into() {  # DIR PACKAGE...
  local dir=$1; shift
  log "installing $* into $dir"
  "$python" -m pip install -q --no-deps --target "$dir" "$@"
}
if ! ls /usr/local/cuda*/include/cupti_activity.h >/dev/null 2>&1 \
   && [ ! -f "$deps/cupti-cu13/nvidia/cu13/include/cupti_activity.h" ]; then
  pip_into "$deps/cupti-cu13" nvidia-cuda-cupti==13.5.25 nvidia-cuda-runtime==13.5.37
fi
if [ ! -f "$deps/cupti-cu12/nvidia/cuda_cupti/lib/libcupti.so.12" ]; then
  pip_into "$deps/cupti-cu12" nvidia-cuda-cupti-cu12==12.9.79
fi
if [ -f "$deps/cupti-cu13/nvidia/cu13/include/cupti_activity.h" ] \
   && ! ls /usr/local/cuda*/include/cupti_activity.h >/dev/null 2>&1; then
  cmake_args+=(-DCHAKRA_CUPTI_INCLUDE_DIR="$deps/cupti-cu13/nvidia/cu13/include")
fi

# --- Holistic Trace Analysis ------------------------------------------------------
# tools.hta and the README's HTA block run HTA 0.5.0 on our captures. It
# lives in its own virtual environment, .deps/hta, so its packages never
# reach the job's Python: its wheel asks for jupyterlab and pytest, which
# none of its analyses import, so it is installed without them, beside the
# libraries it does import (pandas below 3: 0.5.0 predates pandas 3).
# Only the tests need it: where it cannot be installed, setup goes on and
# tools.hta says so.
# The build does not need it: it installs in the background while the build
# compiles (about 20 s of a clean clone's setup, issue #53), and setup waits
# for it at the end.
hta=$deps/hta
mkdir -p "$deps"
hta_pid=""
if ! "$hta/bin/python" -c 'import hta.trace_analysis' 2>/dev/null; then
  log "installing HolisticTraceAnalysis==0.5.0 into $hta (in the background)"
  # pip's output goes to a log: it calls the two requirements left out an
  # "ERROR" (a dependency conflict) even when all went well.
  { { "$python" -m venv "$hta" &&
      "$hta/bin/python" -m pip install -q --no-deps HolisticTraceAnalysis==0.5.0 &&
      "$hta/bin/python" -m pip install -q 'pandas>=2.2,<3' 'numpy>=1.26' 'plotly>=5.11' \
        'networkx>=3.1' 'pydot>=1.3' ijson pyyaml psutil &&
      "$hta/bin/python" -c 'import hta.trace_analysis'; } >"$deps/hta-install.log" 2>&1 ||
      log "warning: HTA was not installed (tools.hta and the README's HTA block will fail): $deps/hta-install.log"
  } </dev/null &
  hta_pid=$!
fi

# --- build and install ----------------------------------------------------------
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
if [ ! -f "$build/CMakeCache.txt" ]; then
  # Quiet but for our own lines: which torch, which of its configs (the
  # minimal one when torch's own cannot configure here, issue #25), which ABI.
  mkdir -p "$build"
  cmake -S "$root" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DPython3_EXECUTABLE="$python" "${cmake_args[@]}" >"$build/configure.log" 2>&1 ||
    { cat "$build/configure.log" >&2; exit 1; }
  sed -n 's/^-- chakrashim: /[setup] /p' "$build/configure.log"
elif [ ${#cmake_args[@]} -gt 0 ]; then
  cmake "$build" "${cmake_args[@]}" >/dev/null
fi
cmake --build "$build" -j "$(nproc)"
cmake --install "$build" --prefix "$prefix" >/dev/null
[ -z "$hta_pid" ] || wait "$hta_pid"
log "installed into $prefix:"
log "  preload   $prefix/lib/libchakrashim.so"
log "  core      $prefix/lib/libchakrashim_core.so"
log "  bridge    $prefix/lib/libchakrashim_torch.so"
log "  command   $prefix/bin/chakrashim"
log "  launcher  $prefix/bin/chakra-run"
