"""Children started in mid-window (issue: never harm the job, acceptance 3):
none of them writes or creates anything or changes the parent's files, and
the parent's files are complete and hold each node once."""
import collections
import unittest

from e2e_case import CaptureCase
from harness import all_files, job_env, run_job


class Children(CaptureCase):
    def run_mode(self, mode, said):
        """children.py in `mode`; the children ran (the job printed `said`)
        and left the parent's capture alone."""
        r = run_job("children.py", [mode], job_env(self.trace_dir, CHAKRA_START_STEP=2,
                                                   CHAKRA_END_STEP=5))
        self.assert_ran(r)
        self.assertEqual(all_files(self.trace_dir), ["0_chakra/rank-0.json", "0_kineto/rank-0.json"])
        cap = self.assert_valid_capture([2, 3, 4, 5])
        ids = collections.Counter(n["id"] for n in cap.et["nodes"])
        self.assertEqual([i for i, c in ids.items() if c > 1], [], "an ET node written twice")
        # One line of ours: the parent's summary. The children said nothing.
        ours = [l for l in r.stderr.splitlines() if l.startswith("[chakrashim")]
        self.assertEqual(len(ours), 1, r.stderr)
        self.assertIn(said, r.stdout)

    def test_dataloader_workers_under_spawn(self):
        self.run_mode("spawn_loader", "loader batches 4")

    def test_a_python_subprocess_running_torch_ops(self):
        self.run_mode("subprocess", "child said 12.0 rc 0")

    def test_a_forked_child_dies_of_sigterm_as_it_would_without_us(self):
        # Our window handlers must not be inherited: the child has no watcher
        # thread, and a recorded-but-ignored SIGTERM made Pool.terminate hang.
        self.run_mode("fork_sigterm", "child ended by SIGTERM")

    def test_fork_pool_workers_running_ops(self):
        self.run_mode("fork_pool", "pool results [9.0, 12.0, 16.0]")


if __name__ == "__main__":
    unittest.main()
