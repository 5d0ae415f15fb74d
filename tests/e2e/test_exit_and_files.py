"""Exit paths inside the window, second runs, unwritable folders, and a
window never reached."""
import json
import os
import unittest

from e2e_case import CaptureCase
from harness import Capture, all_files, capture_files, job_env, run_job, run_plain


class ExitAndFiles(CaptureCase):
    def test_a_window_that_starts_after_the_last_step_writes_nothing_and_says_so(self):
        # Issue #49 case 3: an 8-step job (steps 0-7) evaluates and saves
        # its model after training; CHAKRA_START_STEP=8 armed at the last
        # step's end and wrote a pair of 0 steps holding the eval and the
        # teardown, blaming skipped steps. A window that keeps no whole step
        # writes nothing, and is said not reached.
        r = run_job("plain_loop.py", [8, "--eval-after"], job_env(self.trace_dir, CHAKRA_START_STEP=8))
        self.assert_ran(r)
        self.assertIn("evaluated", r.stdout)
        ours = [l for l in r.stderr.splitlines() if l.startswith("[chakrashim")]
        self.assertEqual(len(ours), 1, r.stderr)
        self.assertIn("the window from step 8 was not reached: the job completed 8 optimizer steps (steps 0-7) and "
                      "ended during step 8", ours[0])
        self.assertEqual(all_files(self.trace_dir) if os.path.exists(self.trace_dir) else [], [])

    def test_check_tells_a_lost_device_trace_from_a_capture_without_one(self):
        # Issue #49 case 4: the device trace deleted after a capture (as a
        # crash after the ET was written leaves it) passed check, taken for a
        # CHAKRA_DEVICE_TRACE=0 capture. The ET now says which it was.
        from harness import run_check
        r = run_job("plain_loop.py", [6], job_env(self.trace_dir, CHAKRA_START_STEP=2, CHAKRA_END_STEP=3))
        self.assert_ran(r)
        et, dev = capture_files(self.trace_dir)
        with open(et) as f:
            self.assertEqual(json.load(f)["chakrashim"]["device_trace"], "on")
        os.unlink(dev)
        checked = run_check([self.trace_dir])
        self.assertEqual(checked.returncode, 1, checked.stdout)
        self.assertIn("[ranks.unpaired] 0_chakra/rank-0.json says its window has a device trace, and there is none",
                      checked.stdout)
        self.trace_dir = self.trace_dir + "-off"
        r = run_job("plain_loop.py", [6], job_env(self.trace_dir, CHAKRA_START_STEP=2, CHAKRA_END_STEP=3,
                                                  CHAKRA_DEVICE_TRACE=0))
        self.assert_ran(r)
        with open(capture_files(self.trace_dir)[0]) as f:
            self.assertEqual(json.load(f)["chakrashim"]["device_trace"], "off")
        self.assertEqual(run_check([self.trace_dir], "--strict").returncode, 0)

    def test_repeated_windows_write_nothing_for_one_the_job_ends_in(self):
        # 14 steps (0-13), windows 2-3 every 6: step-2, step-8, and one from
        # step 14, which the job ends in (eval and save): step-14/ held 0
        # steps and 6 ops, which check counted and report charted.
        r = run_job("plain_loop.py", [14, "--eval-after"],
                    job_env(self.trace_dir, CHAKRA_START_STEP=2, CHAKRA_END_STEP=3, CHAKRA_REPEAT_EVERY=6))
        self.assert_ran(r)
        self.assertEqual(sorted(os.listdir(self.trace_dir)), ["step-2", "step-8"])
        self.assertEqual(r.stderr.count("captured steps"), 2, r.stderr)
        self.assertNotIn("warning", r.stderr)
        self.assert_check_passes()

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

    def test_an_exception_while_torch_distributed_is_asked_lets_the_question_finish_first(self):
        # The watch thread waits for the GIL (the job holds it) when the job
        # fails: our atexit callback releases the GIL until the question is
        # answered, so that Python's finalization never ends that thread in
        # PyGILState_Ensure (pthread_exit through our frames: CI's ASan
        # variant reported it as a stack overflow, 2026-12-07).
        r = run_job("exit_mid_window.py", ["raise_while_asked"],
                    job_env(self.trace_dir, CHAKRA_START_STEP=2, CHAKRA_END_STEP=6, CHAKRA_LOG_LEVEL="debug"))
        self.assert_ran(r, rc=1)
        self.assertIn("RuntimeError: the job failed in mid-window", r.stderr)
        self.assertIn("Python finalizes: the torch.distributed question under way was let finish", r.stderr)
        self.assertEqual(Capture(self.trace_dir).et_steps(), [2, 3])
        self.assert_check_passes()

    # Op spans at half of torch.profiler's cost, goal 4: a job that ends
    # right after a completed step used to get an empty ProfilerStep#N+1
    # (interpreter teardown, up to 500 ms) and partial_last_step N+1.
    def assert_no_empty_partial_step(self, steps):
        cap = Capture(self.trace_dir)
        self.assertEqual(cap.meta["steps"]["captured"], steps)
        self.assertIsNone(cap.meta["steps"]["partial_last_step"])
        self.assertEqual(cap.device_steps(), steps)
        self.assert_check_passes()

    def test_a_normal_end_right_after_a_step_writes_no_empty_step(self):
        r = run_job("exit_mid_window.py", ["end"], job_env(self.trace_dir, CHAKRA_START_STEP=2,
                                                           CHAKRA_END_STEP=9))
        self.assert_ran(r)
        self.assert_no_empty_partial_step([2, 3])

    def test_sys_exit_and_an_exception_right_after_a_step_write_no_empty_step(self):
        for how, rc in (("exit", 3), ("raise", 1)):
            with self.subTest(how=how):
                self.trace_dir = os.path.join(os.path.dirname(self.trace_dir), "traces-" + how)
                r = run_job("exit_mid_window.py", [how, 3],
                            job_env(self.trace_dir, CHAKRA_START_STEP=2, CHAKRA_END_STEP=6))
                self.assert_ran(r, rc=rc)
                self.assert_no_empty_partial_step([2, 3])

    def test_sigterm_and_sigint_right_after_a_step_write_no_empty_step(self):
        import signal
        for how, sig in (("sigterm", signal.SIGTERM), ("sigint", signal.SIGINT)):
            with self.subTest(how=how):
                self.trace_dir = os.path.join(os.path.dirname(self.trace_dir), "traces-" + how)
                r = run_job("exit_mid_window.py", [how],
                            job_env(self.trace_dir, CHAKRA_START_STEP=2, CHAKRA_END_STEP=6))
                self.assert_ran(r, rc=-sig)
                self.assert_no_empty_partial_step([2, 3])

    def test_the_summary_line_gives_steps_as_ranges(self):
        r = run_job("plain_loop.py", [40], job_env(self.trace_dir, CHAKRA_START_STEP=2,
                                                   CHAKRA_END_STEP=30, CHAKRA_WARMUP_STEPS=1,
                                                   CHAKRA_ACTIVE_STEPS=2))
        self.assert_ran(r)
        line = next(l for l in r.stderr.splitlines() if "captured steps" in l)
        self.assertIn("captured steps [3-4,6-7,9-10,12-13,15-16,18-19,21-22,24-25,27-28,30]", line)

    def test_an_unwritable_trace_dir_names_the_variable(self):
        r = run_job("plain_loop.py", [4], job_env("/proc/nope", CHAKRA_START_STEP=1, CHAKRA_END_STEP=2))
        self.assert_ran(r)
        self.assertIn("cannot write traces under CHAKRA_TRACE_DIR=/proc/nope (", r.stderr)

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

    def test_start_zero_in_a_process_that_never_steps_and_exits_at_once_leaves_nothing(self):
        # os._exit runs no exit handler: the window armed as torch loaded
        # must have made nothing on disk yet (soak seed 33019).
        from harness import PYTHON, run
        r = run([PYTHON, "-c", "import os, torch; print(torch.ones(3).sum().item(), flush=True); os._exit(0)"],
                job_env(self.trace_dir, CHAKRA_START_STEP=0))
        self.assert_ran(r)
        self.assertEqual(all_files(self.trace_dir) if os.path.exists(self.trace_dir) else [], [])

    def test_start_zero_with_spawned_loader_workers_leaves_only_the_jobs_capture(self):
        # Each spawned DataLoader worker imports torch, so arms a window at
        # step 0, never steps, and is ended by torch's SIGTERM handler with
        # _exit(0) when the job's exit terminates it: it used to leave an
        # empty .partial of each kind in a folder of its own.
        from harness import run_job
        r = run_job("spawn_loader_workers.py", [4], job_env(self.trace_dir, CHAKRA_START_STEP=0, CHAKRA_END_STEP=2))
        self.assert_ran(r)
        files = all_files(self.trace_dir)
        self.assertEqual([f for f in files if f.endswith(".partial")], [], files)
        self.assertEqual(sorted(f for f in files if f.endswith(".json")),
                         ["0_chakra/rank-0.json", "0_kineto/rank-0.json"], files)
        self.assertEqual(Capture(self.trace_dir).meta["steps"]["captured"], [0, 1, 2])
        self.assert_check_passes()


if __name__ == "__main__":
    unittest.main()
