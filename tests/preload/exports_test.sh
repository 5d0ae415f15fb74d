#!/usr/bin/env bash
# What the preload puts into every process, and what its libraries export
# (docs/design.md section 2):
# - the stub, libchakrashim.so, exports dlopen and chakrashim_* only and
#   needs the C runtime alone (no C++ runtime in every process);
# - the core beside it exports its one entry and needs only the C and C++
#   runtimes and the loader;
# - the bridge exports only its attach entry.
# None has a RUNPATH, and none pulls in fmt, spdlog, zlib, torch, CUPTI,
# CUDA or Python.
set -u
fail=0
say() { echo "exports_test: $*"; }

stub=${CHAKRASHIM_TEST_PRELOAD:?}
core=$(dirname "$stub")/libchakrashim_core.so
[ -f "$core" ] || { say "no core beside the stub: $core"; exit 1; }

exports() { nm -D --defined-only "$1" | awk '{print $3}'; }
needed() { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'; }

# 1. Defined dynamic symbols.
syms=$(exports "$stub")
[ -n "$syms" ] || { say "no dynamic symbols read from $stub"; exit 1; }
bad=$(echo "$syms" | grep -v -E '^(dlopen|chakrashim_[A-Za-z0-9_]+)$')
if [ -n "$bad" ]; then say "unexpected exports in $stub:"; echo "$bad"; fail=1; fi
echo "$syms" | grep -qx dlopen || { say "dlopen is not exported by the stub"; fail=1; }
csyms=$(exports "$core")
if [ "$csyms" != "chakrashim_core_start" ]; then say "core exports: $csyms"; fail=1; fi

# 2. DT_NEEDED. The sanitizer runtimes are allowed in sanitizer builds.
for lib in $(needed "$stub"); do
  case "$lib" in
    libc.so.6) ;;
    libasan.so*|libubsan.so*|libtsan.so*|liblsan.so*) ;;
    *) say "unexpected DT_NEEDED $lib in the stub"; fail=1 ;;
  esac
done
for lib in $(needed "$core"); do
  case "$lib" in
    libc.so.6|libstdc++.so.6|libm.so.6|libgcc_s.so.1|ld-linux*.so.*) ;;
    libasan.so*|libubsan.so*|libtsan.so*|liblsan.so*) ;;
    *) say "unexpected DT_NEEDED $lib in the core"; fail=1 ;;
  esac
done

# 3. ldd: none of these may be pulled in, directly or not.
for lib in "$stub" "$core"; do
  deps=$(ldd "$lib")
  for forbidden in libfmt libspdlog libz.so libtorch libc10 libcupti libcuda libpython; do
    if echo "$deps" | grep -q "$forbidden"; then say "ldd $lib shows $forbidden"; fail=1; fi
  done
  # 4. No RUNPATH that could pull another library in.
  if readelf -d "$lib" | grep -qE 'RUNPATH|RPATH'; then say "$lib has a RUNPATH"; fail=1; fi
done

# 5. The bridge exports only its attach entry, and has no RUNPATH to the
# build machine's torch.
if [ -n "${CHAKRASHIM_TEST_BRIDGE:-}" ]; then
  bsyms=$(exports "$CHAKRASHIM_TEST_BRIDGE")
  if [ "$bsyms" != "chakrashim_bridge_attach" ]; then
    say "bridge exports: $bsyms"; fail=1
  fi
  if readelf -d "$CHAKRASHIM_TEST_BRIDGE" | grep -qE 'RUNPATH|RPATH'; then say "bridge has a RUNPATH"; fail=1; fi
fi

[ $fail -eq 0 ] && say "ok: stub $(echo $syms | tr '\n' ' '); core $csyms"
exit $fail
