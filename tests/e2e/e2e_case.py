"""The base of every end-to-end test case: a temporary trace folder and the
assertions that every capture must pass."""
import os
import unittest

from harness import Capture, run_check, temp_dir_for  # noqa: F401


class CaptureCase(unittest.TestCase):
    def setUp(self):
        # A folder that does not exist yet: chakrashim creates it at arm.
        self.trace_dir = os.path.join(temp_dir_for(self), "traces")

    def assert_ran(self, r, rc=0):
        self.assertEqual(r.returncode, rc, f"stdout:\n{r.stdout}\nstderr:\n{r.stderr}")

    def assert_valid_capture(self, steps, rank=0, index=0, job="0", coverage=0.99):
        """Both files hold exactly `steps`, they link, and check passes."""
        cap = Capture(self.trace_dir, job=job, index=index, rank=rank)
        self.assertIn("finish_ts", cap.et)
        self.assertEqual(cap.device_steps(), steps, "ProfilerStep#N in the device trace")
        self.assertEqual(cap.et_steps(), steps, "outermost Optimizer.step# nodes in the ET")
        self.assertGreaterEqual(cap.rf_coverage(), coverage)
        self.assert_check_passes()
        return cap

    def assert_check_passes(self, *extra):
        """`chakrashim check` accepts the capture (warnings allowed)."""
        checked = run_check([self.trace_dir], *extra)
        self.assertEqual(checked.returncode, 0, checked.stdout + checked.stderr)
        return checked
