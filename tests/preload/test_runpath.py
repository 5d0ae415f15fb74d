"""A library with RUNPATH $ORIGIN/sub that dlopens "libdep.so" by bare name
keeps working under LD_PRELOAD=libchakrashim.so (docs/design.md section 4.2)."""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "support"))
from chakra_test import PRELOAD, SANITIZER_RUNTIME, clean_env, run, temp_dir  # noqa: E402

RP = os.environ.get("CHAKRASHIM_TEST_RUNPATH_DIR", "")
HOST = os.path.join(RP, "chakra_runpath_host")
OUTER = os.path.join(RP, "libouter.so")
NAIVE = os.path.join(RP, "libchakra_naive_wrapper.so")


def direct(preload):
    """In sanitizer variants the runtime's own dlopen interceptor comes first
    and loses the caller's RUNPATH by itself (runpath_fixture/outer.c), so
    libouter calls the preloaded library's dlopen directly: what is tested
    is still our entry, as built with the sanitizer's flags."""
    return dict(CHAKRASHIM_FIXTURE_DLOPEN_FROM=preload) if SANITIZER_RUNTIME and preload else {}


class RunpathLookup(unittest.TestCase):
    def run_host(self, preload, **env):
        return run([HOST, OUTER], clean_env(LD_PRELOAD=preload, **direct(preload), **env))

    def test_fixture_works_without_any_preload(self):
        r = self.run_host(None)
        self.assertEqual((r.returncode, r.stdout), (0, "ok 42\n"), r.stderr)

    def test_a_naive_wrapper_breaks_the_fixture(self):
        # The negative control: if this passed, the fixture could not tell a
        # tail call from a call-and-return.
        r = self.run_host(NAIVE)
        self.assertNotEqual(r.returncode, 0, "the fixture no longer detects a non-tail-call wrapper")
        self.assertIn("libdep.so", r.stderr)

    def test_the_preload_keeps_the_lookup_when_inert(self):
        r = self.run_host(PRELOAD)
        self.assertEqual((r.returncode, r.stdout), (0, "ok 42\n"), r.stderr)

    def test_the_preload_keeps_the_lookup_when_a_target(self):
        d = temp_dir(self)
        r = self.run_host(PRELOAD, CHAKRA_PROFILE=1, CHAKRA_TRACE_DIR=os.path.join(d, "t"),
                          CHAKRA_LOG_LEVEL="debug")
        self.assertEqual((r.returncode, r.stdout), (0, "ok 42\n"), r.stderr)
        self.assertFalse(os.path.exists(os.path.join(d, "t")))

    def test_the_preload_keeps_the_lookup_inside_python(self):
        # Python's own dlopen path, with the Python API present and a pending
        # call scheduled by our wrapper.
        code = ("import ctypes,sys; o=ctypes.CDLL(sys.argv[1]); v=o.outer_load_dep(); "
                "print('ok', v); sys.exit(0 if v == 42 else 1)")
        from chakra_test import PYTHON
        d = temp_dir(self)
        r = run([PYTHON, "-c", code, OUTER],
                clean_env(LD_PRELOAD=PRELOAD, CHAKRA_PROFILE=1, CHAKRA_TRACE_DIR=d, **direct(PRELOAD)))
        self.assertEqual((r.returncode, r.stdout), (0, "ok 42\n"), r.stderr)


if __name__ == "__main__":
    unittest.main()
