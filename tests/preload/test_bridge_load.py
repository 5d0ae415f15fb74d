"""`import torch` under the preload loads the bridge, in target processes
only; a bad configuration gives one line per bad variable; a bridge built for
another libtorch refuses with one line and the job runs on."""
import os
import shutil
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "support"))
from chakra_test import (PRELOAD, PYTHON, WITH_TORCH, clean_env, run,  # noqa: E402
                         temp_dir)

MISMATCH_DIR = os.environ.get("CHAKRASHIM_TEST_MISMATCH_DIR", "")
# The core and the bridge lie beside the preloaded stub.
CORE = os.path.join(os.path.dirname(PRELOAD), "libchakrashim_core.so")
BRIDGE = os.environ.get("CHAKRASHIM_TEST_BRIDGE",
                        os.path.join(os.path.dirname(PRELOAD), "libchakrashim_torch.so"))

# Prints whether the bridge is mapped, the thread count, and a torch result.
PROBE = """
import os, torch
mapped = any('libchakrashim_torch.so' in l for l in open('/proc/self/maps'))
print('bridge', mapped)
print('threads', len(os.listdir('/proc/self/task')))
print('sum', torch.arange(10.).sum().item())
"""


@unittest.skipUnless(WITH_TORCH, "built without the torch bridge")
class BridgeLoading(unittest.TestCase):
    def setUp(self):
        self.dir = temp_dir(self)
        self.trace_dir = os.path.join(self.dir, "traces")

    def probe(self, preload=PRELOAD, **env):
        base = dict(LD_PRELOAD=preload, CHAKRA_TRACE_DIR=self.trace_dir)
        base.update(env)
        return run([PYTHON, "-c", PROBE], clean_env(**base))

    def lines(self, r):
        return dict(line.split(" ", 1) for line in r.stdout.splitlines())

    def test_import_torch_loads_the_bridge_when_profiling(self):
        r = self.probe(CHAKRA_PROFILE=1)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(self.lines(r)["bridge"], "True")
        self.assertEqual(r.stderr, "")
        self.assertFalse(os.path.exists(self.trace_dir), "folders are created at arm, not at load")

    def test_the_bridge_starts_no_thread(self):
        plain = run([PYTHON, "-c", PROBE], clean_env())
        shimmed = self.probe(CHAKRA_PROFILE=1)
        self.assertEqual(self.lines(shimmed)["threads"], self.lines(plain)["threads"])
        self.assertEqual(self.lines(shimmed)["sum"], self.lines(plain)["sum"])

    def test_import_torch_does_not_load_the_bridge_when_profile_is_unset_or_off(self):
        for value in (None, "0", "off", "FALSE"):
            with self.subTest(CHAKRA_PROFILE=value):
                r = self.probe(CHAKRA_PROFILE=value)
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertEqual(self.lines(r)["bridge"], "False")
                if value is None:
                    # CHAKRA_TRACE_DIR without CHAKRA_PROFILE: a user who
                    # forgot it hears so once, at exit (issue #38, item 7).
                    self.assertEqual(r.stderr, "[chakrashim] warning: CHAKRA_TRACE_DIR is set, but not CHAKRA_PROFILE: "
                                               "capture was off, nothing was captured (set CHAKRA_PROFILE=1; "
                                               "chakra-run sets it)\n")
                else:
                    self.assertEqual(r.stderr, "")  # turned off on purpose: nothing to say

    def test_a_rank_outside_chakra_ranks_does_not_load_the_bridge(self):
        r = self.probe(CHAKRA_PROFILE=1, CHAKRA_RANKS="1-3", RANK=0, WORLD_SIZE=4)
        self.assertEqual(self.lines(r)["bridge"], "False")
        r = self.probe(CHAKRA_PROFILE=1, CHAKRA_RANKS="1-3", RANK=2, WORLD_SIZE=4)
        self.assertEqual(self.lines(r)["bridge"], "True")

    def test_a_process_filter_that_does_not_match_leaves_the_process_alone(self):
        r = self.probe(CHAKRA_PROFILE=1, CHAKRA_PROCESS_FILTER="^not-python$")
        self.assertEqual((self.lines(r)["bridge"], r.stderr), ("False", ""))
        r = self.probe(CHAKRA_PROFILE=1, CHAKRA_PROCESS_FILTER="^python")
        self.assertEqual(self.lines(r)["bridge"], "True")

    def test_a_bad_variable_gives_one_line_and_the_job_runs_on(self):
        r = self.probe(CHAKRA_PROFILE=1, CHAKRA_START_STEP="-1")
        self.assertEqual(r.returncode, 0)
        self.assertEqual(self.lines(r)["bridge"], "False")
        self.assertEqual(self.lines(r)["sum"], "45.0")
        err = r.stderr.splitlines()
        self.assertEqual(len(err), 1, r.stderr)
        self.assertIn("CHAKRA_START_STEP='-1'", err[0])
        self.assertIn("decimal digits", err[0])
        self.assertTrue(err[0].startswith("[chakrashim rank 0] error: "), err[0])

    def test_each_bad_variable_has_its_own_line(self):
        r = self.probe(CHAKRA_PROFILE=1, CHAKRA_GZIP="maybe", CHAKRA_RANKS="3-1",
                       CHAKRA_TRACE_DIR=None)
        err = r.stderr.splitlines()
        self.assertEqual(len(err), 3, r.stderr)
        self.assertTrue(any("CHAKRA_GZIP='maybe'" in e for e in err))
        self.assertTrue(any("CHAKRA_RANKS='3-1'" in e for e in err))
        self.assertTrue(any("CHAKRA_TRACE_DIR" in e for e in err))
        self.assertEqual(r.returncode, 0)

    def test_a_bad_profile_value_is_reported_and_stays_inert(self):
        r = self.probe(CHAKRA_PROFILE="maybe")
        self.assertEqual(self.lines(r)["bridge"], "False")
        self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)
        self.assertIn("CHAKRA_PROFILE='maybe'", r.stderr)

    def test_an_unknown_variable_is_a_warning_and_capture_stays_on(self):
        r = self.probe(CHAKRA_PROFILE=1, CHAKRA_STRAT_STEP=3)
        self.assertEqual(self.lines(r)["bridge"], "True")
        self.assertIn("did you mean CHAKRA_START_STEP", r.stderr)
        self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)

    def test_a_bridge_built_for_another_torch_refuses_with_one_line(self):
        core = os.path.join(MISMATCH_DIR, "libchakrashim.so")
        self.assertTrue(os.path.exists(core), core)
        r = self.probe(preload=core, CHAKRA_PROFILE=1)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(self.lines(r)["sum"], "45.0")
        err = r.stderr.splitlines()
        self.assertEqual(len(err), 1, r.stderr)
        self.assertIn("built for torch 0.0.0-other", err[0])
        self.assertIn("libtorch_cpu.so", err[0])

    def test_a_missing_bridge_is_one_line_and_the_job_runs_on(self):
        d = temp_dir(self)
        stub = os.path.join(d, "libchakrashim.so")
        shutil.copy(PRELOAD, stub)
        shutil.copy(CORE, d)
        r = self.probe(preload=stub, CHAKRA_PROFILE=1)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(self.lines(r)["sum"], "45.0")
        self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)
        self.assertIn("cannot load the torch bridge", r.stderr)

    def test_a_missing_core_is_one_line_and_the_job_runs_on(self):
        # The stub alone, as a broken install would leave it.
        d = temp_dir(self)
        stub = os.path.join(d, "libchakrashim.so")
        shutil.copy(PRELOAD, stub)
        r = self.probe(preload=stub, CHAKRA_PROFILE=1)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual((self.lines(r)["sum"], self.lines(r)["bridge"]), ("45.0", "False"))
        self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)
        self.assertIn("cannot load the core: " + os.path.join(d, "libchakrashim_core.so"), r.stderr)

    def test_a_relative_preload_path_still_finds_the_core_after_a_chdir(self):
        # LD_PRELOAD names the stub relative to where the job starts; the job
        # leaves that folder before it imports torch. The core and the bridge
        # are still found beside the stub (the stub resolves its folder at load).
        d = temp_dir(self)
        lib = os.path.join(d, "lib")
        os.makedirs(lib)
        for f in (PRELOAD, CORE, BRIDGE):
            shutil.copy(f, lib)
        other = os.path.join(d, "elsewhere")
        os.makedirs(other)
        code = "import os; os.chdir(%r)\n%s" % (other, PROBE)
        r = run([PYTHON, "-c", code],
                clean_env(LD_PRELOAD="lib/libchakrashim.so", CHAKRA_PROFILE=1,
                          CHAKRA_TRACE_DIR=self.trace_dir), cwd=d)
        self.assertEqual((r.returncode, r.stderr), (0, ""))
        self.assertEqual(self.lines(r)["bridge"], "True")

    def test_stdout_and_exit_status_are_those_of_the_job(self):
        code = "import torch, sys; torch.manual_seed(0); print(torch.randn(3)); sys.exit(5)"
        plain = run([PYTHON, "-c", code], clean_env())
        shimmed = run([PYTHON, "-c", code],
                      clean_env(LD_PRELOAD=PRELOAD, CHAKRA_PROFILE=1,
                                CHAKRA_TRACE_DIR=self.trace_dir))
        self.assertEqual((shimmed.returncode, shimmed.stdout), (plain.returncode, plain.stdout))
        self.assertEqual(plain.returncode, 5)


if __name__ == "__main__":
    unittest.main()
