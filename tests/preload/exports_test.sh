#!/usr/bin/env bash
# The preloaded core exports only what it interposes plus its C interface,
# and needs only the C and C++ runtimes (docs/design.md section 2). The bridge
# exports only its attach entry.
set -u
fail=0
say() { echo "exports_test: $*"; }

core=${CHAKRASHIM_TEST_PRELOAD:?}
# 1. Defined dynamic symbols: dlopen and chakrashim_* only.
syms=$(nm -D --defined-only "$core" | awk '{print $3}')
[ -n "$syms" ] || { say "no dynamic symbols read from $core"; exit 1; }
bad=$(echo "$syms" | grep -v -E '^(dlopen|chakrashim_[A-Za-z0-9_]+)$')
if [ -n "$bad" ]; then say "unexpected exports in $core:"; echo "$bad"; fail=1; fi
echo "$syms" | grep -qx dlopen || { say "dlopen is not exported"; fail=1; }

# 2. DT_NEEDED: the C and C++ runtimes and the loader, nothing else. The
# sanitizer runtimes are allowed in sanitizer builds.
needed=$(readelf -d "$core" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
for lib in $needed; do
  case "$lib" in
    libc.so.6|libstdc++.so.6|libm.so.6|libgcc_s.so.1|ld-linux*.so.*) ;;
    libasan.so*|libubsan.so*|libtsan.so*|liblsan.so*) ;;
    *) say "unexpected DT_NEEDED $lib"; fail=1 ;;
  esac
done

# 3. ldd: none of these may be pulled in, directly or not.
deps=$(ldd "$core")
for forbidden in libfmt libspdlog libz.so libtorch libc10 libcupti libcuda libpython; do
  if echo "$deps" | grep -q "$forbidden"; then say "ldd shows $forbidden"; fail=1; fi
done

# 4. No RUNPATH that could pull another library in.
if readelf -d "$core" | grep -qE 'RUNPATH|RPATH'; then say "$core has a RUNPATH"; fail=1; fi

# 5. The bridge exports only its attach entry, and has no RUNPATH to the
# build machine's torch.
if [ -n "${CHAKRASHIM_TEST_BRIDGE:-}" ]; then
  bsyms=$(nm -D --defined-only "$CHAKRASHIM_TEST_BRIDGE" | awk '{print $3}')
  if [ "$bsyms" != "chakrashim_bridge_attach" ]; then
    say "bridge exports: $bsyms"; fail=1
  fi
  if readelf -d "$CHAKRASHIM_TEST_BRIDGE" | grep -qE 'RUNPATH|RPATH'; then say "bridge has a RUNPATH"; fail=1; fi
fi

[ $fail -eq 0 ] && say "ok: $(echo $syms | tr '\n' ' ')"
exit $fail
