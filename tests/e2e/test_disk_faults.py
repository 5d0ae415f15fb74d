"""Disk faults, injected for real (issue: never harm the job, acceptance 4
and 5): each gives one clear error line, no incomplete file under a final
name, and the job finishes normally with its own exit code and output."""
import json
import os
import resource
import shutil
import subprocess
import time
import unittest

from e2e_case import CaptureCase
from harness import JOBS, PYTHON, all_files, job_env, run_job, run_plain, temp_dir_for


def ours(stderr):
    return [l for l in stderr.splitlines() if l.startswith("[chakrashim")]


class DiskFaults(CaptureCase):
    def assert_no_incomplete_final_file(self, root):
        for rel in all_files(root) if os.path.exists(root) else []:
            if rel.endswith(".partial"):
                continue
            with open(os.path.join(root, rel)) as f:
                json.load(f)  # a final name always holds complete JSON

    def mount_tmpfs(self, options):
        where = os.path.join(temp_dir_for(self), "mnt")
        os.makedirs(where)
        r = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", where],
                           capture_output=True, text=True)
        if r.returncode != 0:
            self.skipTest(f"cannot mount a tmpfs here: {r.stderr.strip()}")
        self.addCleanup(lambda: subprocess.run(["umount", "-l", where]))
        return where

    def assert_job_unharmed(self, r, plain):
        self.assertEqual(r.returncode, plain.returncode, r.stderr)
        self.assertEqual(r.stdout, plain.stdout)

    def test_a_read_only_trace_dir(self):
        root = self.mount_tmpfs("ro,size=1m")
        plain = run_plain("plain_loop.py", [5])
        r = run_job("plain_loop.py", [5], job_env(os.path.join(root, "traces"),
                                                  CHAKRA_START_STEP=1, CHAKRA_END_STEP=3))
        self.assert_job_unharmed(r, plain)
        lines = ours(r.stderr)
        self.assertEqual(len(lines), 1, r.stderr)
        self.assertIn("Read-only file system", lines[0])

    def test_a_full_small_tmpfs(self):
        root = self.mount_tmpfs("size=96k")
        trace_dir = os.path.join(root, "traces")
        plain = run_plain("plain_loop.py", [8])
        r = run_job("plain_loop.py", [8], job_env(trace_dir, CHAKRA_START_STEP=1,
                                                  CHAKRA_END_STEP=6))
        self.assert_job_unharmed(r, plain)
        lines = ours(r.stderr)
        self.assertEqual(len(lines), 1, r.stderr)
        self.assertIn("error", lines[0])
        self.assertIn("No incomplete file", lines[0])
        self.assert_no_incomplete_final_file(trace_dir)
        self.assertFalse(os.path.exists(os.path.join(trace_dir, "0_chakra", "rank-0.json")),
                         "the ET cannot fit in 96 KB")

    def test_writes_that_fail_through_rlimit_fsize(self):
        def limit():
            resource.setrlimit(resource.RLIMIT_FSIZE, (64 * 1024, 64 * 1024))
        plain = run_plain("plain_loop.py", [8])
        r = subprocess.run([PYTHON, os.path.join(JOBS, "plain_loop.py"), "8"],
                           env=job_env(self.trace_dir, CHAKRA_START_STEP=1, CHAKRA_END_STEP=6),
                           capture_output=True, text=True, preexec_fn=limit, timeout=300)
        self.assert_job_unharmed(r, plain)
        lines = ours(r.stderr)
        self.assertEqual(len(lines), 1, r.stderr)
        self.assertIn("File too large", lines[0])
        self.assert_no_incomplete_final_file(self.trace_dir)

    def test_the_trace_dir_removed_while_the_job_runs(self):
        proc = subprocess.Popen([PYTHON, "-u", os.path.join(JOBS, "signal_target.py"), "30"],
                                env=job_env(self.trace_dir, CHAKRA_START_STEP=2,
                                            CHAKRA_END_STEP=20),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for line in proc.stdout:
            if line.strip() == "step 5":
                break
        shutil.rmtree(self.trace_dir)
        out, err = proc.communicate(timeout=120)
        self.assertEqual(proc.returncode, 0, err)
        self.assertIn("finished", out)
        lines = ours(err)
        self.assertEqual(len(lines), 1, err)
        self.assertIn("No such file or directory", lines[0])
        self.assert_no_incomplete_final_file(self.trace_dir)

    def test_a_huge_pending_trace_at_exit_is_bounded_by_the_exit_timeout(self):
        # The window never ends: everything is written at exit, which may
        # wait CHAKRA_EXIT_TIMEOUT=0 seconds only.
        t0 = time.monotonic()
        r = run_job("plain_loop.py", [400], job_env(self.trace_dir, CHAKRA_START_STEP=1,
                                                    CHAKRA_END_STEP=100000,
                                                    CHAKRA_EXIT_TIMEOUT=0))
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = ours(r.stderr)
        self.assertEqual(len(lines), 1, r.stderr)
        self.assertIn("did not finish within CHAKRA_EXIT_TIMEOUT=0 s", lines[0])
        self.assert_no_incomplete_final_file(self.trace_dir)
        self.assertTrue(any(f.endswith(".partial") for f in all_files(self.trace_dir)))
        self.assertLess(time.monotonic() - t0, 120)
        # check reports what was left.
        from harness import run_check
        checked = run_check([self.trace_dir])
        self.assertEqual(checked.returncode, 1)
        self.assertIn("files.partial", checked.stdout)


if __name__ == "__main__":
    unittest.main()
