"""Processes that merely inherit LD_PRELOAD are untouched: a plain program and
the Python interpreter, under a valid configuration with CHAKRA_PROFILE=1,
start no thread, create no folder, print nothing and exit as they would."""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "support"))
from chakra_test import PRELOAD, PYTHON, clean_env, run, temp_dir  # noqa: E402

THREADS = os.environ.get("CHAKRASHIM_TEST_THREAD_COUNT", "")


class InertProcesses(unittest.TestCase):
    def setUp(self):
        self.dir = temp_dir(self)
        self.trace_dir = os.path.join(self.dir, "traces")

    def profile_env(self, **extra):
        # START=0 is the most eager window: a process arms at attach. These
        # processes never import torch, so even then nothing may happen.
        settings = dict(LD_PRELOAD=PRELOAD, CHAKRA_PROFILE=1, CHAKRA_TRACE_DIR=self.trace_dir,
                        CHAKRA_START_STEP=0)
        settings.update(extra)
        return clean_env(**settings)

    def assert_same_run(self, cmd, expected_rc):
        plain = run(cmd, clean_env())
        shimmed = run(cmd, self.profile_env())
        self.assertEqual(plain.returncode, expected_rc, plain.stderr)
        self.assertEqual(shimmed.returncode, plain.returncode)
        self.assertEqual(shimmed.stdout, plain.stdout)
        self.assertEqual(shimmed.stderr, plain.stderr)
        self.assertFalse(os.path.exists(self.trace_dir), "a folder was created")
        return plain, shimmed

    def test_a_plain_program_starts_no_thread_and_keeps_its_exit_status(self):
        plain, _ = self.assert_same_run([THREADS, "7"], 7)
        self.assertEqual(plain.stdout, "threads 1\n")

    def test_a_plain_program_that_dlopens_never_loads_the_core(self):
        # The stub loads the C++ core only where Python is: a launcher or
        # tool that loads a plugin keeps only the small stub mapped.
        plain, _ = self.assert_same_run([THREADS, "0", "dlopen"], 0)
        self.assertEqual(plain.stdout, "dlopen ok\ncore 0\nthreads 1\n")

    def test_python_loads_the_core_only_when_profile_is_set(self):
        code = ("import json, ctypes\n"
                "print(any('libchakrashim_core.so' in l for l in open('/proc/self/maps')))")
        r = run([PYTHON, "-c", code], clean_env(LD_PRELOAD=PRELOAD))
        self.assertEqual((r.returncode, r.stdout, r.stderr), (0, "False\n", ""))
        r = run([PYTHON, "-c", code], self.profile_env())
        self.assertEqual((r.returncode, r.stdout, r.stderr), (0, "True\n", ""))

    def test_python_pass_is_unchanged(self):
        self.assert_same_run([PYTHON, "-c", "pass"], 0)

    def test_python_keeps_its_exit_status(self):
        self.assert_same_run([PYTHON, "-c", "import sys; sys.exit(3)"], 3)

    def test_python_starts_no_thread(self):
        code = "import os; print(len(os.listdir('/proc/self/task')))"
        plain, shimmed = self.assert_same_run([PYTHON, "-c", code], 0)
        self.assertEqual(plain.stdout.strip(), "1")

    def test_python_loads_extension_modules_as_usual(self):
        # Extension modules come through our dlopen wrapper.
        code = "import json, ctypes, _decimal, sqlite3; print(sqlite3.sqlite_version_info >= (3,))"
        plain, _ = self.assert_same_run([PYTHON, "-c", code], 0)
        self.assertEqual(plain.stdout, "True\n")

    def test_a_bad_variable_says_nothing_in_a_process_without_torch(self):
        # Error lines wait for libtorch: a shell or launcher that inherits a
        # bad variable stays silent (docs/design.md section 3: once per process that
        # would have been a target).
        r = run([PYTHON, "-c", "pass"], self.profile_env(CHAKRA_START_STEP="abc"))
        self.assertEqual((r.returncode, r.stdout, r.stderr), (0, "", ""))

    def test_the_library_is_mapped_but_does_nothing_when_profile_is_unset(self):
        code = "print(any('libchakrashim.so' in l for l in open('/proc/self/maps')))"
        r = run([PYTHON, "-c", code], clean_env(LD_PRELOAD=PRELOAD))
        self.assertEqual((r.returncode, r.stdout, r.stderr), (0, "True\n", ""))


if __name__ == "__main__":
    unittest.main()
