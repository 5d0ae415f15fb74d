"""Signals in mid-window (issue: never harm the job, acceptance 1): the
files are finalized with every completed step plus the partial one, and the
job then ends exactly as it would have without the shim."""
import os
import signal
import subprocess
import time
import unittest

from e2e_case import CaptureCase
from harness import JOBS, PYTHON, Capture, job_env


class Signals(CaptureCase):
    def start(self, *args, **env):
        settings = dict(CHAKRA_START_STEP=2, CHAKRA_END_STEP=500)
        settings.update(env)
        proc = subprocess.Popen([PYTHON, "-u", os.path.join(JOBS, "signal_target.py"), "400", *args],
                                env=job_env(self.trace_dir, **settings),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.addCleanup(lambda: proc.poll() is None and proc.kill())
        return proc

    def wait_for_step(self, proc, n):
        seen = []
        for line in proc.stdout:
            seen.append(line)
            if line.strip() == f"step {n}":
                return seen
        self.fail("the job ended before step %d: %s" % (n, "".join(seen)))

    def finish(self, proc, timeout=60):
        out, err = proc.communicate(timeout=timeout)
        return proc.returncode, out, err

    def assert_partial_capture(self, reason):
        cap = Capture(self.trace_dir)
        steps = cap.meta["steps"]
        self.assertEqual(steps["reason"], reason)
        self.assertTrue(steps["cut_short"])
        self.assertGreaterEqual(len(steps["captured"]), 3)
        self.assertEqual(steps["captured"], list(range(2, 2 + len(steps["captured"]))))
        self.assertEqual(cap.et_steps(), steps["captured"])
        self.assertEqual(cap.device_steps(), steps["captured"] + [steps["partial_last_step"]])
        self.assert_check_passes()
        return cap

    def test_sigterm_finalizes_the_files_and_the_job_dies_of_sigterm(self):
        proc = self.start()
        self.wait_for_step(proc, 6)
        proc.send_signal(signal.SIGTERM)
        rc, _, err = self.finish(proc)
        self.assertEqual(rc, -signal.SIGTERM, err)
        self.assert_partial_capture("signal:SIGTERM")

    def test_sigterm_while_the_job_is_blocked_outside_torch_still_finalizes_and_kills(self):
        proc = self.start("--block")
        self.wait_for_step(proc, 4)
        time.sleep(0.3)  # inside the 60 s sleep: no op will come
        t0 = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        rc, _, err = self.finish(proc)
        self.assertEqual(rc, -signal.SIGTERM, err)
        self.assertLess(time.monotonic() - t0, 15, "the signal took too long to take effect")
        self.assert_partial_capture("signal:SIGTERM")

    def test_a_python_handler_installed_before_the_window_still_runs(self):
        proc = self.start("--handler", "before")
        self.wait_for_step(proc, 6)
        proc.send_signal(signal.SIGTERM)
        rc, out, err = self.finish(proc)
        self.assertEqual(rc, 7, err)
        self.assertIn("handler got 15", out)
        self.assert_partial_capture("signal:SIGTERM")

    def test_a_python_handler_installed_after_arm_runs_and_exit_finalizes(self):
        proc = self.start("--handler", "after")
        self.wait_for_step(proc, 6)
        proc.send_signal(signal.SIGTERM)
        rc, out, err = self.finish(proc)
        self.assertEqual(rc, 7, err)
        self.assertIn("handler got 15", out)
        # The job's handler took the signal and called sys.exit: we finalize
        # at exit, as for any exit in mid-window.
        cap = Capture(self.trace_dir)
        self.assertEqual(cap.meta["steps"]["reason"], "exit")
        self.assert_check_passes()

    def test_sigint_raises_keyboard_interrupt_as_usual_and_finalizes(self):
        proc = self.start()
        self.wait_for_step(proc, 6)
        proc.send_signal(signal.SIGINT)
        rc, _, err = self.finish(proc)
        self.assertIn("KeyboardInterrupt", err)
        self.assertEqual(rc, -signal.SIGINT, err)  # 130 as seen from a shell
        self.assert_partial_capture("signal:SIGINT")

    def test_the_flush_signal_writes_the_files_and_the_job_goes_on(self):
        proc = self.start(CHAKRA_FLUSH_SIGNAL="USR1")
        self.wait_for_step(proc, 6)
        proc.send_signal(signal.SIGUSR1)
        rc, out, err = self.finish(proc, timeout=120)
        self.assertEqual(rc, 0, err)
        self.assertIn("finished", out)
        self.assertEqual(out.count("step "), 400 - 6 - 1)  # the rest of the steps ran
        self.assert_partial_capture("signal:SIGUSR1")

    def test_a_signal_outside_the_window_is_untouched(self):
        proc = self.start(CHAKRA_START_STEP=1000)
        self.wait_for_step(proc, 3)
        proc.send_signal(signal.SIGTERM)
        rc, _, err = self.finish(proc)
        self.assertEqual(rc, -signal.SIGTERM, err)
        self.assertFalse(os.path.exists(self.trace_dir))


if __name__ == "__main__":
    unittest.main()
