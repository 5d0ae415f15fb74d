"""Thread starts that fail (issue #34, item 6): in a pids-limited cgroup, or
wherever the system refuses a thread, every thread start of chakrashim's
fails while the job's own threads run. The seam: tests/support/no_threads.c,
preloaded in front of the shim, refuses every pthread_create called from our
libraries (we run as root, where RLIMIT_NPROC is not enforced). Before the
fix the trace writer's std::system_error escaped disarm, and at exit an
atexit handler: the job died of SIGABRT (rc 134) with both files .partial.
Now the job exits with its own code and its output unchanged, and every
file is whole or absent: the writer's work is done on the calling thread,
and each other thread of ours is given up with one line."""
import os
import unittest

from e2e_case import CaptureCase
from harness import PRELOAD, Capture, all_files, job_env, run_job, run_plain

NO_THREADS = os.environ.get("CHAKRASHIM_TEST_NO_THREADS", "")
FAKE_CUPTI = os.environ.get("CHAKRASHIM_TEST_FAKE_CUPTI", "")
REFUSED = "no_threads: refused a thread start"


@unittest.skipUnless(NO_THREADS, "the no-threads seam was not built")
class NoThreadOfOurs(CaptureCase):
    def env(self, **settings):
        env = job_env(self.trace_dir, **settings)
        # The seam in front: its pthread_create is the one our libraries call.
        env["LD_PRELOAD"] = env["LD_PRELOAD"].replace(PRELOAD, f"{NO_THREADS}:{PRELOAD}")
        return env

    def assert_nothing_partial(self):
        self.assertEqual([f for f in all_files(self.trace_dir) if f.endswith(".partial")], [])

    def test_no_thread_of_ours_is_started_while_torch_is_imported(self):
        # Issue #48, item 8: the optimizer hooks' thread took a pid while
        # torch was imported, before the job's own threads were up (under
        # pids.max=2, OpenBLAS could not start its own). Now the first thread
        # of ours is asked for once the job trains: after its "imported"
        # line, and never in a job that only imports torch.
        job = ("import sys, torch\n"
               "print('imported', file=sys.stderr, flush=True)\n"
               "if len(sys.argv) > 1:\n"
               "    m = torch.nn.Linear(2, 2); opt = torch.optim.SGD(m.parameters(), lr=0.1)\n"
               "    for _ in range(3):\n"
               "        opt.zero_grad(); m(torch.ones(1, 2)).sum().backward(); opt.step()\n")
        from harness import PYTHON, run
        idle = run([PYTHON, "-c", job], self.env(CHAKRA_START_STEP=100))
        self.assertEqual(idle.returncode, 0, idle.stderr)
        self.assertNotIn(REFUSED, idle.stderr)
        trains = run([PYTHON, "-c", job, "train"], self.env(CHAKRA_START_STEP=100))
        self.assertEqual(trains.returncode, 0, trains.stderr)
        self.assertIn(REFUSED, trains.stderr)
        self.assertGreater(trains.stderr.index(REFUSED), trains.stderr.index("imported"), trains.stderr)

    def test_the_window_is_written_on_the_stepping_thread(self):
        for recorder in ("native", "torch"):
            with self.subTest(recorder=recorder):
                self.trace_dir = os.path.join(os.path.dirname(self.trace_dir), "traces-" + recorder)
                r = run_job("plain_loop.py", [8], self.env(CHAKRA_START_STEP=2, CHAKRA_END_STEP=4,
                                                            CHAKRA_ET_RECORDER=recorder))
                self.assert_ran(r)
                self.assertIn(REFUSED, r.stderr)
                self.assertIn("cannot start the trace writer thread (", r.stderr)
                self.assertIn("the traces are written on this thread, now", r.stderr)
                self.assertEqual(r.stdout, run_plain("plain_loop.py", [8]).stdout)
                self.assert_valid_capture([2, 3, 4])
                self.assert_nothing_partial()

    def test_a_window_open_at_exit_is_written_and_the_exit_code_kept(self):
        # disarm from the exit handler: the escape was out of an atexit handler.
        r = run_job("exit_mid_window.py", ["exit", 7],
                    self.env(CHAKRA_START_STEP=2, CHAKRA_END_STEP=100))
        self.assert_ran(r, rc=7)
        self.assertIn("cannot start the trace writer thread (", r.stderr)
        cap = Capture(self.trace_dir)
        self.assertEqual(cap.meta["steps"]["captured"], [2, 3])
        self.assertEqual(cap.et_steps(), [2, 3])
        self.assert_check_passes()
        self.assert_nothing_partial()

    @unittest.skipUnless(FAKE_CUPTI, "the libcupti test double was not built")
    def test_no_cupti_decode_thread_leaves_host_ops_only(self):
        r = run_job("plain_loop.py", [8], self.env(CHAKRA_START_STEP=2, CHAKRA_END_STEP=4,
                                                    CHAKRA_CUPTI_LIB=FAKE_CUPTI))
        self.assert_ran(r)
        self.assertIn("cannot start the thread that decodes CUPTI's buffers (", r.stderr)
        cap = self.assert_valid_capture([2, 3, 4])
        self.assertEqual(cap.meta["device_trace"]["cupti"], "failed")
        self.assertFalse([e for e in cap.events if e.get("cat") == "kernel"])
        self.assert_nothing_partial()

    def test_on_demand_without_a_trigger_watch_still_takes_the_trigger_signal(self):
        r = run_job("paced_loop.py", [20, "--step-ms", 5, "--signal-at", "5:USR2"],
                    self.env(CHAKRA_ON_DEMAND=1, CHAKRA_TRIGGER_SIGNAL="USR2",
                             CHAKRA_TRIGGER_STEPS=2))
        self.assert_ran(r)
        self.assertIn("cannot start the thread that looks for trigger files (", r.stderr)
        # Each given up once, not tried again (and said again) at every step.
        for line in ("cannot start the thread that looks for trigger files",
                     "cannot start the thread that installs the optimizer-step hooks",
                     "cannot start the thread that asks torch.distributed"):
            self.assertEqual(r.stderr.count(line), 1, r.stderr)
        self.assertEqual(len(all_files(self.trace_dir)), 2, all_files(self.trace_dir))
        self.assertEqual(r.stdout, run_plain("paced_loop.py", [20, "--step-ms", 5]).stdout)
        self.assert_nothing_partial()


if __name__ == "__main__":
    unittest.main()
