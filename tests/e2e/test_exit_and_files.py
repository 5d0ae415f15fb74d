"""Exit paths inside the window, second runs, unwritable folders, and a
window never reached."""
import os
import unittest

from e2e_case import CaptureCase
from harness import Capture, all_files, job_env, run_job, run_plain


class ExitAndFiles(CaptureCase):
    def test_sys_exit_in_mid_window_keeps_the_exit_code_and_valid_files(self):
        r = run_job("exit_mid_window.py", ["exit", 3],
                    job_env(self.trace_dir, CHAKRA_START_STEP=2, CHAKRA_END_STEP=6))
        self.assert_ran(r, rc=3)
        cap = Capture(self.trace_dir)
        self.assertEqual(cap.meta["steps"]["captured"], [2, 3])
        self.assertTrue(cap.meta["steps"]["cut_short"])
        self.assertEqual(cap.et_steps(), [2, 3])
        self.assert_check_passes()

    def test_an_uncaught_exception_in_mid_window_keeps_exit_code_1_and_valid_files(self):
        r = run_job("exit_mid_window.py", ["raise"],
                    job_env(self.trace_dir, CHAKRA_START_STEP=2, CHAKRA_END_STEP=6))
        self.assert_ran(r, rc=1)
        self.assertIn("RuntimeError: the job failed in mid-window", r.stderr)
        cap = Capture(self.trace_dir)
        self.assertEqual(cap.et_steps(), [2, 3])
        self.assert_check_passes()

    def assert_only_partials_reported(self):
        files = all_files(self.trace_dir)
        self.assertTrue(files)
        self.assertTrue(all(f.endswith(".partial") for f in files), files)
        from harness import run_check
        checked = run_check([self.trace_dir])
        self.assertEqual(checked.returncode, 1)
        self.assertIn("files.partial", checked.stdout)

    def test_os_exit_in_mid_window_leaves_at_most_partials_that_check_reports(self):
        r = run_job("exit_mid_window.py", ["os_exit", 5],
                    job_env(self.trace_dir, CHAKRA_START_STEP=2, CHAKRA_END_STEP=6))
        self.assert_ran(r, rc=5)
        self.assert_only_partials_reported()

    def test_sigkill_in_mid_window_leaves_at_most_partials_that_check_reports(self):
        r = run_job("exit_mid_window.py", ["sigkill"],
                    job_env(self.trace_dir, CHAKRA_START_STEP=2, CHAKRA_END_STEP=6))
        self.assert_ran(r, rc=-9)
        self.assert_only_partials_reported()

    def test_a_second_run_into_the_same_folder_gets_new_sibling_folders(self):
        env = job_env(self.trace_dir, CHAKRA_START_STEP=1, CHAKRA_END_STEP=1)
        self.assert_ran(run_job("plain_loop.py", [3], env))
        self.assert_ran(run_job("plain_loop.py", [3], env))
        self.assertEqual(all_files(self.trace_dir),
                         ["0_chakra.1/rank-0.json", "0_chakra/rank-0.json",
                          "0_kineto.1/rank-0.json", "0_kineto/rank-0.json"])
        self.assert_valid_capture([1], index=1)

    def test_overwrite_replaces_the_first_runs_files(self):
        env = job_env(self.trace_dir, CHAKRA_START_STEP=1, CHAKRA_END_STEP=1, CHAKRA_OVERWRITE=1)
        self.assert_ran(run_job("plain_loop.py", [3], env))
        self.assert_ran(run_job("plain_loop.py", [3], env))
        self.assertEqual(all_files(self.trace_dir), ["0_chakra/rank-0.json", "0_kineto/rank-0.json"])
        self.assert_valid_capture([1])

    def test_gzip_writes_the_device_trace_compressed_and_the_et_plain(self):
        import gzip, json
        r = run_job("plain_loop.py", [4], job_env(self.trace_dir, CHAKRA_START_STEP=1,
                                                  CHAKRA_END_STEP=2, CHAKRA_GZIP=1))
        self.assert_ran(r)
        self.assertEqual(all_files(self.trace_dir), ["0_chakra/rank-0.json", "0_kineto/rank-0.json.gz"])
        with gzip.open(os.path.join(self.trace_dir, "0_kineto", "rank-0.json.gz"), "rt") as f:
            dev = json.load(f)
        self.assertEqual(dev["chakrashim"]["steps"]["captured"], [1, 2])
        self.assert_check_passes()

    def test_an_unwritable_trace_dir_is_one_line_and_the_job_runs_on(self):
        blocker = os.path.join(self.trace_dir, "not-a-folder")
        os.makedirs(self.trace_dir, exist_ok=True)
        open(blocker, "w").close()
        plain = run_plain("plain_loop.py", [4])
        r = run_job("plain_loop.py", [4], job_env(os.path.join(blocker, "traces"),
                                                  CHAKRA_START_STEP=1, CHAKRA_END_STEP=2))
        self.assert_ran(r)
        self.assertEqual(r.stdout, plain.stdout)
        lines = [l for l in r.stderr.splitlines() if l.startswith("[chakrashim")]
        self.assertEqual(len(lines), 1, r.stderr)
        self.assertIn("cannot write traces", lines[0])
        self.assertIn("Not a directory", lines[0])

    def test_a_window_never_reached_is_one_warning_and_no_folder(self):
        r = run_job("plain_loop.py", [3], job_env(self.trace_dir, CHAKRA_START_STEP=10))
        self.assert_ran(r)
        self.assertFalse(os.path.exists(self.trace_dir))
        lines = [l for l in r.stderr.splitlines() if l.startswith("[chakrashim")]
        self.assertEqual(len(lines), 1, r.stderr)
        self.assertIn("never reached", lines[0])
        self.assertIn("3 optimizer steps", lines[0])

    def test_start_zero_in_a_process_that_never_steps_leaves_nothing(self):
        from harness import PYTHON, run
        r = run([PYTHON, "-c", "import torch; print(torch.ones(3).sum().item())"],
                job_env(self.trace_dir, CHAKRA_START_STEP=0))
        self.assert_ran(r)
        self.assertEqual(all_files(self.trace_dir) if os.path.exists(self.trace_dir) else [], [])


if __name__ == "__main__":
    unittest.main()
