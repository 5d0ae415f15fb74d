"""Signals in mid-window (issue: never harm the job, acceptance 1): the
files are finalized with every completed step plus the partial one, and the
job then ends exactly as it would have without the shim."""
import os
import random
import signal
import socket
import subprocess
import sys
import time
import unittest

from e2e_case import CaptureCase
from harness import (JOBS, PRELOAD, PYTHON, Capture, all_files, capture_files, clean_env, job_env, run_check,
                     run_job)
from chakra_test import SANITIZE


class Signals(CaptureCase):
    def start(self, *args, plain=False, steps=400, **env):
        settings = dict(CHAKRA_START_STEP=2, CHAKRA_END_STEP=500)
        settings.update(env)
        environment = clean_env() if plain else job_env(self.trace_dir, **settings)
        proc = subprocess.Popen([PYTHON, "-u", os.path.join(JOBS, "signal_target.py"), str(steps), *args],
                                env=environment,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.addCleanup(lambda: proc.poll() is None and proc.kill())
        return proc

    def signalled(self, sig, *args, at=6, timeout=60, **settings):
        """The job (start's args and settings) sent sig once it printed step
        `at`: its (exit status, stdout, stderr) once it ended."""
        proc = self.start(*args, **settings)
        self.wait_for_step(proc, at)
        proc.send_signal(sig)
        return self.finish(proc, timeout=timeout)

    def wait_for_step(self, proc, n):
        seen = []
        for line in proc.stdout:
            seen.append(line)
            if line.strip() == f"step {n}":
                return seen
        self.fail("the job ended before step %d: %s" % (n, "".join(seen)))

    def wait_for_line(self, proc, text):
        """Reads the job's output until a line holding text: whether one came
        (False when the job ended first)."""
        for line in proc.stdout:
            if text in line:
                return True
        return False

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
        # The step the signal cut is there when ops of it were recorded; a
        # signal that came between steps (the job sleeping) leaves none.
        partial = [steps["partial_last_step"]] if steps["partial_last_step"] is not None else []
        self.assertEqual(cap.device_steps(), steps["captured"] + partial)
        self.assert_check_passes()
        return cap

    def test_sigterm_finalizes_the_files_and_the_job_dies_of_sigterm(self):
        rc, _, err = self.signalled(signal.SIGTERM)
        self.assertEqual(rc, -signal.SIGTERM, err)
        self.assert_partial_capture("signal:SIGTERM")

    def test_sigterm_while_the_job_is_blocked_outside_torch_still_finalizes_and_kills(self):
        proc = self.start("--block")
        self.wait_for_step(proc, 4)
        time.sleep(0.3)  # inside the 600 s sleep: no op will come
        t0 = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        rc, _, err = self.finish(proc, timeout=300)
        self.assertEqual(rc, -signal.SIGTERM, err)
        # Far under the job's 600 s sleep: the watcher finalized and the
        # signal took effect (15 s against a 60 s sleep was a verdict on
        # timing on a loaded machine, issue #39).
        self.assertLess(time.monotonic() - t0, 120, "the signal took too long to take effect")
        self.assert_partial_capture("signal:SIGTERM")

    def test_a_python_handler_installed_before_the_window_still_runs(self):
        rc, out, err = self.signalled(signal.SIGTERM, "--handler", "before")
        self.assertEqual(rc, 7, err)
        self.assertIn("handler got 15", out)
        self.assert_partial_capture("signal:SIGTERM")

    def test_a_python_handler_installed_after_arm_runs_and_exit_finalizes(self):
        rc, out, err = self.signalled(signal.SIGTERM, "--handler", "after")
        self.assertEqual(rc, 7, err)
        self.assertIn("handler got 15", out)
        # The job's handler took the signal and called sys.exit: we finalize
        # at exit, as for any exit in mid-window.
        cap = Capture(self.trace_dir)
        self.assertEqual(cap.meta["steps"]["reason"], "exit")
        self.assert_check_passes()

    def test_sigint_raises_keyboard_interrupt_as_usual_and_finalizes(self):
        rc, _, err = self.signalled(signal.SIGINT)
        self.assertIn("KeyboardInterrupt", err)
        self.assertEqual(rc, -signal.SIGINT, err)  # 130 as seen from a shell
        self.assert_partial_capture("signal:SIGINT")

    def test_the_flush_signal_writes_the_files_and_the_job_goes_on(self):
        # 60 steps: the job going on after the flush is the point, not 400
        # recorded steps of it (issue #53: 25 s of CI's 200 in this file).
        rc, out, err = self.signalled(signal.SIGUSR1, CHAKRA_FLUSH_SIGNAL="USR1", timeout=120, steps=60)
        self.assertEqual(rc, 0, err)
        self.assertIn("finished", out)
        self.assertEqual(out.count("step "), 60 - 6 - 1)  # the rest of the steps ran
        self.assert_partial_capture("signal:SIGUSR1")

    def test_a_signal_outside_the_window_is_untouched(self):
        rc, _, err = self.signalled(signal.SIGTERM, CHAKRA_START_STEP=1000, at=3)
        self.assertEqual(rc, -signal.SIGTERM, err)
        self.assertFalse(os.path.exists(self.trace_dir))

    def test_sigterm_in_the_step_before_the_window_leaves_nothing(self):
        # The window's preparation (issue #34 item 4) runs at the step before
        # its first: it chose and made the output folders there, so a SIGTERM
        # in that step left two empty folders that `check` calls an error
        # (seen in SignalDuringTheDistributedQuery). Folders are made at arm.
        r = run_job("paced_loop.py", [12, "--step-ms", 5, "--signal-at", "2:TERM"],
                    job_env(self.trace_dir, CHAKRA_START_STEP=4, CHAKRA_END_STEP=6))
        self.assertEqual(r.returncode, -signal.SIGTERM, r.stderr)
        self.assertFalse(os.path.exists(self.trace_dir), os.listdir(self.trace_dir)
                         if os.path.exists(self.trace_dir) else "")


    # --- never harm the job, part two (defects 4, 5 and 7) -----------------
    def test_sigterm_after_the_flush_signal_is_never_lost(self):
        # The flush signal, then SIGTERM 0.5 s later while the job sleeps
        # outside torch ops: the relay kept only the first signal, and the
        # job ran all its steps and exited 0.
        proc = self.start("--block", CHAKRA_FLUSH_SIGNAL="USR1")
        self.wait_for_step(proc, 4)
        time.sleep(0.3)
        t0 = time.monotonic()
        proc.send_signal(signal.SIGUSR1)
        time.sleep(0.5)
        proc.send_signal(signal.SIGTERM)
        rc, out, err = self.finish(proc, timeout=300)
        self.assertEqual(rc, -signal.SIGTERM, err)
        self.assertLess(time.monotonic() - t0, 120)  # against the 600 s sleep
        self.assertNotIn("finished", out)
        cap = Capture(self.trace_dir)
        self.assertEqual(cap.meta["steps"]["reason"], "signal:SIGUSR1")
        self.assert_check_passes()

    def test_a_second_ctrl_c_is_a_second_ctrl_c(self):
        # The job catches the first KeyboardInterrupt and trains on; the
        # second must end it, as it does without the shim.
        outcomes = []
        for plain in (True, False):
            proc = self.start("--catch-int", "--block", plain=plain)
            self.wait_for_step(proc, 4)
            time.sleep(0.3)
            proc.send_signal(signal.SIGINT)
            # The second Ctrl-C once the job has caught the first: two sent
            # 0.3 s apart could both land before Python ran its handler on a
            # loaded machine, where they are one signal (issue #39).
            caught = self.wait_for_line(proc, "caught one")
            proc.send_signal(signal.SIGINT)
            rc, out, err = self.finish(proc)
            outcomes.append((rc, caught or "caught one" in out, "finished" in out))
        self.assertEqual(outcomes[0], (-signal.SIGINT, True, False), "the job without the shim")
        self.assertEqual(outcomes[1], outcomes[0], "the job under the shim")
        self.assert_check_passes()

    def test_sigterm_twice_ends_the_job_once_with_its_files(self):
        proc = self.start()
        self.wait_for_step(proc, 6)
        proc.send_signal(signal.SIGTERM)
        time.sleep(0.02)
        proc.send_signal(signal.SIGTERM)
        rc, _, err = self.finish(proc)
        self.assertEqual(rc, -signal.SIGTERM, err)
        self.assert_partial_capture("signal:SIGTERM")

    def test_sigterm_as_the_window_closes_normally_ends_the_job_with_final_files(self):
        # Item 7: the window closes at END_STEP's optimizer step (the
        # writer starts) and the job sends itself SIGTERM right after, at
        # small varying delays, so that it lands before, during and after
        # the relay's watcher wakes for the normal stop. Without the shim
        # the job dies at once; with it, it dies of the same SIGTERM once
        # the files are written. The watcher used to wait its whole grace
        # period (2 s) for a finalize that a closed window never does,
        # while the job trained on.
        # Under TSan (CHAKRASHIM_TEST_RUNS=3) three of the delays.
        # Judged without a clock (issue #39: a 1.5 s bound on the lag failed
        # at 2.2 and 3.6 s on a loaded 2-core machine, where the writer runs
        # at the lowest priority): the watcher says (debug) whenever it waits
        # out its grace period, which a normally closed window never does;
        # and the job trains at most the step it was in and the next (its
        # next step end waits for the files, then dies of the SIGTERM).
        # The time bound left only tells a hang.
        delays = (0, 20, 3000, 0, 0, 50, 100, 200, 500, 1000)
        runs = min(len(delays), int(os.environ.get("CHAKRASHIM_TEST_RUNS", len(delays))))
        bound = 60.0
        for run, delay_us in enumerate(delays[:runs]):
            with self.subTest(run=run, delay_us=delay_us):
                self.trace_dir = os.path.join(os.path.dirname(self.trace_dir), f"traces-{run}")
                proc = self.start("--kill-self-at", "5", "--kill-delay-us", str(delay_us),
                                  CHAKRA_END_STEP=5, CHAKRA_LOG_LEVEL="debug")
                killed_at = None
                for line in proc.stdout:
                    if line.startswith("kill at "):
                        killed_at = float(line.split()[2])
                        break
                self.assertIsNotNone(killed_at, "the job never reached its kill")
                rc, out, err = self.finish(proc)
                lag = time.monotonic() - killed_at
                self.assertEqual(rc, -signal.SIGTERM, err)
                self.assertNotIn("finished", out)
                self.assertLess(lag, bound, f"SIGTERM took {lag:.2f} s to end the job")
                self.assertNotIn("the watcher ends the window", err)
                after = [ln for ln in out.splitlines() if ln.startswith("step ")]
                self.assertLessEqual(len(after), 2, f"the job trained on after its SIGTERM: {after}")
                cap = Capture(self.trace_dir)
                self.assertEqual(cap.meta["steps"]["reason"], "end_step")
                self.assertEqual(cap.meta["steps"]["captured"], [2, 3, 4, 5])
                self.assertEqual(cap.device_steps(), [2, 3, 4, 5])
                self.assertEqual(cap.et_steps(), [2, 3, 4, 5])
                self.assert_check_passes()

    def test_the_jobs_own_flush_signal_handler_runs_after_the_flush(self):
        # Lightning requeues a Slurm job from its SIGUSR1 handler; ours used
        # to take the signal and never pass it on.
        for when in ("before-torch", "after-torch"):
            with self.subTest(when=when):
                self.trace_dir = os.path.join(os.path.dirname(self.trace_dir), "traces-" + when)
                rc, out, err = self.signalled(signal.SIGUSR1, "--usr1", when, steps=60, CHAKRA_FLUSH_SIGNAL="USR1",
                                              timeout=120)
                self.assertEqual(rc, 0, err)
                self.assertIn("job got USR1", out)
                self.assertIn("finished", out)
                self.assert_partial_capture("signal:SIGUSR1")

    def test_the_flush_signal_outside_the_window_never_kills_the_job(self):
        # Before the window opens and after it closed: USR1's default action
        # would kill a job that has no handler.
        for name, settings, at in (("before", dict(CHAKRA_START_STEP=1000, CHAKRA_END_STEP=1000), 3),
                                   ("after", dict(CHAKRA_START_STEP=2, CHAKRA_END_STEP=3), 8)):
            with self.subTest(name):
                self.trace_dir = os.path.join(os.path.dirname(self.trace_dir), "traces-" + name)
                rc, out, err = self.signalled(signal.SIGUSR1, steps=60, CHAKRA_FLUSH_SIGNAL="USR1", at=at,
                                              timeout=120, **settings)
                self.assertEqual(rc, 0, err)
                self.assertIn("finished", out)
                self.assertIn("SIGUSR1 (CHAKRA_FLUSH_SIGNAL) arrived outside the capture window", err)

    def test_the_flush_signal_outside_the_window_reaches_the_jobs_handler(self):
        rc, out, err = self.signalled(signal.SIGUSR1, "--usr1", "after-torch", steps=60, CHAKRA_FLUSH_SIGNAL="USR1",
                                      CHAKRA_START_STEP=1000, CHAKRA_END_STEP=1000, at=3, timeout=120)
        self.assertEqual(rc, 0, err)
        self.assertIn("job got USR1", out)
        self.assertNotIn("outside the capture window", err)


class ExceptionsOfTheJobsHandlers(CaptureCase):
    """Item 11: chakrashim ran Python on the stepping thread at step
    boundaries and cleared any error there, so an exception that the job's
    signal handler raised inside that Python was erased (about 30% of them
    in this job, on the code before the fix). It then still registered its
    optimizer step hooks from a Python pending call, on the main thread
    (6 to 8 frames of ours there per run). Now no Python of ours runs on a
    thread of the job's: the job's profiler sees none on its main thread,
    and its handler, which also raises inside frames of ours, loses
    nothing."""

    def test_every_exception_the_jobs_handler_raises_reaches_the_job(self):
        # The window closes at step 400 and its files are written while the
        # job goes on ticking. Under TSan, checking and writing them takes
        # minutes (the whole run's ET, 170 MB, overran the default 20 s
        # CHAKRA_EXIT_TIMEOUT at exit and stayed .partial, as it should).
        # Under a sanitizer a step takes about 30 ms: fewer steps give as
        # many ticks.
        steps = 300 if SANITIZE else 1500
        # 60 ticks raised at least, however the machine delivers them (the
        # job trains on past `steps` until then): a loaded CI machine once
        # gave exactly 50 in 1500 steps.
        r = run_job("timer_exceptions.py", [steps, 60],
                    job_env(self.trace_dir, CHAKRA_START_STEP=2, CHAKRA_END_STEP=steps // 4,
                            CHAKRA_EXIT_TIMEOUT=240, CHAKRA_LOG_LEVEL="debug"), timeout=400)
        self.assert_ran(r)
        raised, caught, ours, hooks = (int(x) for x in r.stdout.split()[1::2])
        self.assertGreater(raised, 50)
        self.assertEqual(raised, caught, r.stdout + "".join(l + "\n" for l in r.stderr.splitlines()
                                                            if l.startswith("lost tick") or "Exception ignored" in l
                                                            or "Tick" in l))
        self.assertEqual(ours, 0, "frames of chakrashim's Python ran on the job's main thread")
        self.assertGreater(hooks, 0, "the step hooks are Python functions of ours")
        # Every step of the window, though ticks landed in our step hooks
        # too (an optimizer step ended by one has no post hook).
        self.assertEqual(Capture(self.trace_dir).device_steps(), list(range(2, steps // 4 + 1)))
        self.assertIn("steps are counted by torch.optim's step hooks", r.stderr,
                      "the hooks were registered (from a thread of ours)")
        self.assert_check_passes()


SLOW_WRITES = os.environ.get("CHAKRASHIM_TEST_SLOW_WRITES", "")
CHAKRA_RUN = os.path.join(os.path.dirname(__file__), "..", "..", "scripts", "chakra-run")


@unittest.skipUnless(SLOW_WRITES, "the slow-writes seam was not built")
class CtrlCAtExit(CaptureCase):
    """Issue #48, item 6: a terminal's Ctrl-C (SIGINT to the process group)
    while the job waits at exit for its window's files. Python's
    finalization had put SIGINT back to its default by then: the job died
    at once, the files stayed .partial, nothing was said. Now the wait is
    said after a second; a first Ctrl-C lets the files finish, then the job
    dies of it; a second abandons them, naming the .partial files. The
    slow-writes seam (tests/support/slow_writes.c) makes the write take
    seconds, and each signal is sent once the job says it waits: no race
    against the machine's speed."""

    WAITS = "the job waits while chakrashim writes its traces"
    FIRST = "a signal arrived while the job waits for its traces to be written"
    ABANDON = "a second signal: the traces are abandoned; what was not written yet stays unfinished, of"

    def start(self, through_chakra_run=False):
        env = job_env(self.trace_dir, CHAKRA_START_STEP=1, CHAKRA_END_STEP=100, CHAKRA_EXIT_TIMEOUT=300,
                      CHAKRASHIM_TEST_SLOW_WRITE_US=6000)
        job = [PYTHON, os.path.join(JOBS, "many_ops.py"), 4, 2000]
        if through_chakra_run:
            env.pop("CHAKRA_PROFILE")
            env.pop("CHAKRA_TRACE_DIR")
            env["LD_PRELOAD"] = env["LD_PRELOAD"].replace(PRELOAD, SLOW_WRITES)
            env.pop("CHAKRA_START_STEP"), env.pop("CHAKRA_END_STEP"), env.pop("CHAKRA_EXIT_TIMEOUT")
            cmd = [CHAKRA_RUN, "--start", "1", "--end", "100", "--exit-timeout", "300", "--dir", self.trace_dir,
                   "--lib", PRELOAD, "--", *job]
        else:
            env["LD_PRELOAD"] = env["LD_PRELOAD"].replace(PRELOAD, f"{SLOW_WRITES}:{PRELOAD}")
            cmd = job
        self.proc = subprocess.Popen([str(c) for c in cmd], env=env, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, start_new_session=True)
        self.err = []
        import threading
        self.reader = threading.Thread(target=lambda: self.err.extend(iter(self.proc.stderr.readline, "")))
        self.reader.start()

    def wait_for(self, text, timeout=300):
        deadline = time.monotonic() + timeout
        while not any(text in line for line in self.err):
            self.assertIsNone(self.proc.poll(), "".join(self.err))
            self.assertLess(time.monotonic(), deadline, "".join(self.err))
            time.sleep(0.05)

    def finish(self):
        rc = self.proc.wait(timeout=300)
        self.reader.join()
        return rc, "".join(self.err)

    def ctrl_c_once(self, through_chakra_run):
        self.start(through_chakra_run)
        self.wait_for(self.WAITS)
        os.killpg(self.proc.pid, signal.SIGINT)
        rc, err = self.finish()
        self.assertEqual(rc, -signal.SIGINT, err)
        self.assertEqual(err.count(self.FIRST), 1, err)
        self.assertIn("captured steps [1-3]", err)
        self.assertEqual([f for f in all_files(self.trace_dir) if f.endswith(".partial")], [])
        cap = Capture(self.trace_dir)
        self.assertEqual(cap.meta["steps"]["captured"], [1, 2, 3])
        self.assert_check_passes()

    def test_a_ctrl_c_while_the_files_are_written_at_exit_waits_for_them(self):
        self.ctrl_c_once(False)

    def test_a_ctrl_c_through_chakra_run_waits_for_them_too(self):
        self.ctrl_c_once(True)

    def test_a_second_ctrl_c_abandons_them_and_says_which(self):
        self.start()
        self.wait_for(self.WAITS)
        os.killpg(self.proc.pid, signal.SIGINT)
        self.wait_for(self.FIRST)
        os.killpg(self.proc.pid, signal.SIGINT)
        rc, err = self.finish()
        self.assertEqual(rc, -signal.SIGINT, err)
        said = [line for line in err.splitlines() if self.ABANDON in line]
        self.assertEqual(len(said), 1, err)
        et, dev = capture_files(self.trace_dir)
        for path in (et, dev):
            self.assertIn(path + ".partial", said[0])
        # The ET is written first and may be final by then; the device trace
        # is still being written (the seam makes it take seconds): it has no
        # final name, and its .partial stays for check to report.
        self.assertTrue(os.path.exists(dev + ".partial"))
        self.assertFalse(os.path.exists(dev), "an abandoned file has no final name")
        self.assertNotIn("captured steps", err)


class CtrlCDuringPythonsTeardown(CaptureCase):
    """A Ctrl-C (or SIGTERM) after the job's last line, while Python tears its
    modules down, with the window still open (it is written from the C
    atexit handlers, after that teardown). Python's finalization had put
    SIGINT back to the default before the teardown, over our handler: the
    process died at once and the window's files stayed .partial (the soak's
    seeds 33008, 33019). Now the signal waits for the files, then ends the
    process as the default does. The job's __del__ says when the teardown
    runs and then sleeps: no race against the machine's speed."""

    def run_and_signal(self, sig, *flags):
        env = job_env(self.trace_dir, CHAKRA_START_STEP=1, CHAKRA_END_STEP=100)
        proc = subprocess.Popen([PYTHON, os.path.join(JOBS, "slow_teardown.py"), "4", *flags], env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
        err = []
        import threading
        reader = threading.Thread(target=lambda: err.extend(iter(proc.stderr.readline, "")))
        reader.start()
        deadline = time.monotonic() + 300
        while not any("tearing down" in line for line in err):
            self.assertIsNone(proc.poll(), "".join(err))
            self.assertLess(time.monotonic(), deadline, "".join(err))
            time.sleep(0.05)
        os.killpg(proc.pid, sig)
        rc = proc.wait(timeout=300)
        reader.join()
        out = proc.stdout.read()
        proc.stdout.close()
        proc.stderr.close()
        err = "".join(err)
        self.assertEqual(rc, -sig, err)
        # The signal cut the job's 120 s __del__ short (no bound on time).
        self.assertNotIn("teardown finished", err)
        self.assertNotIn("the job's", out)  # Python's handlers are gone at teardown, as without us
        self.assertIn("captured steps [1-3]", err)
        self.assertEqual([f for f in all_files(self.trace_dir) if f.endswith(".partial")], [])
        self.assertEqual(Capture(self.trace_dir).meta["steps"]["captured"], [1, 2, 3])
        self.assert_check_passes()

    def test_a_ctrl_c_during_the_teardown_waits_for_the_files(self):
        self.run_and_signal(signal.SIGINT)

    def test_with_the_jobs_own_sigint_handler_too(self):
        self.run_and_signal(signal.SIGINT, "--sigint-handler")

    def test_a_sigterm_with_the_jobs_handler_during_the_teardown(self):
        self.run_and_signal(signal.SIGTERM, "--sigterm-handler")

    def test_a_sigterm_without_a_handler_during_the_teardown(self):
        self.run_and_signal(signal.SIGTERM)


class SignalDuringTheDistributedQuery(CaptureCase):
    """Defect 3: the capture's lock was held while the process-group record
    started, and a pending signal made our own callback take it again: the
    job then never died of its SIGTERM (3 of 8 runs hung on the code before
    the fix, with these timings). ddp_signal.py makes the stepping thread wait
    for the GIL at the boundary that opens the window; SIGTERM lands at a
    random moment around it. Ten runs: at 3 hangs in 8, ten clean runs of
    the old code happen once in a hundred (was twenty runs, 55 s of CI)."""

    RUNS = int(os.environ.get("CHAKRASHIM_TEST_RUNS", "10"))

    def test_sigterm_while_torch_distributed_is_asked_ends_the_job(self):
        rng = random.Random(7)
        for run in range(self.RUNS):
            trace_dir = os.path.join(os.path.dirname(self.trace_dir), f"run{run}")
            with socket.socket() as s:
                s.bind(("127.0.0.1", 0))
                port = s.getsockname()[1]
            env = job_env(trace_dir, CHAKRA_START_STEP=2, CHAKRA_END_STEP=200,
                          MASTER_ADDR="127.0.0.1", MASTER_PORT=port)
            # Steps enough that the job is still training when the signal
            # lands: with 8 it sometimes ended first (the window now opens
            # at once, step 1 no longer waits for Python), and a SIGTERM that
            # meets the process in its exit_group is lost, shim or not.
            proc = subprocess.Popen([PYTHON, "-u", os.path.join(JOBS, "ddp_signal.py"), "100"],
                                    env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            self.addCleanup(lambda p=proc: p.poll() is None and p.kill())
            for line in proc.stdout:
                if line.strip() == "before step 1":
                    break
            # The window opens at the end of step 1's optimizer step; every
            # GIL hand-over after it takes up to 0.2 s (the spinning thread):
            # the signal lands at the opening or in the window's first steps.
            delay = rng.uniform(0.0, 0.6)
            time.sleep(delay)
            proc.send_signal(signal.SIGTERM)
            try:
                proc.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.communicate()
                self.fail(f"run {run} (SIGTERM {delay:.3f} s after 'before step 1'): "
                          "the job did not end within 30 s")
            self.assertEqual(proc.returncode, -signal.SIGTERM, f"run {run}")
            if os.path.exists(trace_dir):
                checked = run_check([trace_dir])
                self.assertEqual(checked.returncode, 0, f"run {run} (SIGTERM {delay:.3f} s after "
                                 f"'before step 1'):\n{checked.stdout}{checked.stderr}")


# CTest runs this file as two tests of about equal CPU, `--part window` and
# `--part awkward` (tests/e2e/CMakeLists.txt, issue #53); a class listed in
# neither would run in neither, so the file refuses to run then.
PARTS = {"window": ["Signals"],
         "awkward": ["ExceptionsOfTheJobsHandlers", "CtrlCAtExit", "CtrlCDuringPythonsTeardown",
                     "SignalDuringTheDistributedQuery"]}

if __name__ == "__main__":
    if "--part" in sys.argv:
        at = sys.argv.index("--part")
        part = sys.argv[at + 1]
        del sys.argv[at:at + 2]
        classes = sorted(name for name, c in list(globals().items())
                         if isinstance(c, type) and issubclass(c, unittest.TestCase) and c.__module__ == "__main__")
        if classes != sorted(sum(PARTS.values(), [])):
            sys.exit(f"test_signals.py: PARTS names {sorted(sum(PARTS.values(), []))}, the file has {classes}")
        sys.argv += PARTS[part]
    unittest.main()
