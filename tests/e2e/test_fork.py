"""Children forked in mid-window never touch the parent's files (DESIGN.md
section 4.7; issue: capture, acceptance 3)."""
import collections
import os
import unittest

from e2e_case import CaptureCase
from harness import all_files, job_env, run_job


class ForkedChildren(CaptureCase):
    def test_dataloader_workers_forked_in_mid_window_leave_the_parents_files_intact(self):
        # 3 epochs of 4 steps; the window spans epochs 1 and 2, so workers are
        # forked twice while the ET is enabled.
        r = run_job("dataloader_fork.py", [3],
                    job_env(self.trace_dir, CHAKRA_START_STEP=3, CHAKRA_END_STEP=9))
        self.assert_ran(r)
        self.assertEqual(all_files(self.trace_dir), ["0_chakra/rank-0.json", "0_kineto/rank-0.json"])
        cap = self.assert_valid_capture(list(range(3, 10)))
        ids = collections.Counter(n["id"] for n in cap.et["nodes"])
        self.assertEqual([i for i, c in ids.items() if c > 1], [], "ET node written twice")
        rf_ids = collections.Counter(cap.attr(n, "rf_id") for n in cap.op_nodes())
        self.assertEqual([i for i, c in rf_ids.items() if c > 1], [])
        # Only the parent's summary line: children said nothing.
        self.assertEqual(r.stderr.count("[chakrashim"), 1, r.stderr)


if __name__ == "__main__":
    unittest.main()
