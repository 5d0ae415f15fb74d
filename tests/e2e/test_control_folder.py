"""The on-demand control folder, TRACE_DIR/.chakrashim/JOB, and the output
folders, as untrusted input (issue #34 item 5, issue #48 item 5;
docs/guarantees.md, "The trace folder, untrusted by design"): what another
user who can write the trace folder puts there, before the job starts or
while it runs."""
import os
import subprocess
import time
import unittest

from e2e_case import CaptureCase
from harness import Capture, job_env, run_check, run_job
from test_on_demand import AHEAD, OnDemandCase, trigger_text


class UntrustedControlFolder(OnDemandCase):
    """Issue #34 item 5: the control folder sits in the trace folder, which
    others may write (a shared project directory). What they put there
    beforehand or meanwhile changes no file outside our own folder, reads
    nothing but regular files, holds no exit, and leaves on-demand capture
    working: each test ends with a trigger that must still capture."""

    def setUp(self):
        super().setUp()
        # Files of the job's user that an attacker points links at.
        self.outside = self.trace_dir + ".outside"
        os.makedirs(os.path.join(self.outside, "folder"))
        for name in ("victim", os.path.join("folder", "step.json"),
                     os.path.join("folder", "trigger-notes.json"),
                     os.path.join("folder", "missed-config.json"),
                     os.path.join("folder", "missed-1-rank-0.json")):
            with open(os.path.join(self.outside, name), "w") as f:
                f.write("precious " + name)
        os.chmod(os.path.join(self.outside, "victim"), 0o600)
        self.before = self.snapshot()

    def snapshot(self):
        out = {}
        for d, _, names in os.walk(self.outside):
            for n in names:
                path = os.path.join(d, n)
                st = os.lstat(path)
                with open(path, "rb") as f:
                    out[os.path.relpath(path, self.outside)] = (f.read(), st.st_mode, st.st_mtime_ns)
        return out

    def plant_folder(self):
        os.makedirs(self.control(""), exist_ok=True)

    def run_attacked(self, after=None, extra=(), stdin=None, feed=None, settings=None,
                     left=()):
        """Starts a paced job, runs `after(note)` once it publishes, then asks
        for a window the way `chakrashim trigger` does and waits for it; the
        job must then end on time with its own code."""
        job = self.start_paced(3000, *extra, stdin=stdin, **(settings or {}))
        feeder = None
        if feed is not None:
            import threading
            # The feeder owns the pipe (communicate() must not close it).
            pipe, job.stdin = job.stdin, None
            feeder = threading.Thread(target=feed, args=(pipe,))
            feeder.start()
        try:
            note = self.wait_for("step.json", self.published_step, job)
            self.assertEqual(note["pid"], job.pid)
            if after:
                after(note)
            good = self.published_step()["step"] + AHEAD
            self.write_trigger("trigger-good.json", trigger_text(good, 2))
            self.wait_for_window(good, job)
        finally:
            began = time.monotonic()
            rc, out, err = self.finish(job, timeout=60)
            took = time.monotonic() - began
            if feeder:
                feeder.join()
        self.assertEqual(rc, 0, err)
        # Far inside the 60 s: the exit waits on no FIFO or lock (a
        # generous bound for a loaded machine: the job itself takes a step).
        self.assertLess(took, 30, err)
        self.window(good, [good, good + 1])
        self.assertEqual(self.snapshot(), self.before, "a file outside our folder changed")
        # The job removes its own files and, when nothing else is left in it,
        # the folder; what others put there that is not ours stays.
        folder = os.path.join(self.trace_dir, ".chakrashim", self.control_name)
        self.assertEqual(sorted(os.listdir(folder)) if os.path.exists(folder) else [],
                         sorted(left), "what the job left in its control folder")
        return out, err

    def test_fifos_block_neither_the_watch_nor_the_exit(self):
        self.plant_folder()
        # The old fixed temporary name, and a trigger that is a FIFO.
        os.mkfifo(self.control(".step.json.tmp"))
        out, err = self.run_attacked(after=lambda note: os.mkfifo(self.control("trigger-x.json")),
                                     left=[".step.json.tmp"])
        self.assertIn("trigger-x.json is ignored: not a regular file", err)

    def test_links_at_file_names_are_neither_written_nor_read_through(self):
        self.plant_folder()
        victim = os.path.join(self.outside, "victim")
        os.symlink(victim, self.control(".step.json.tmp"))
        os.symlink(victim, self.control(".missed-1-rank-0.json.tmp"))

        def after(note):
            os.symlink(victim, self.control("trigger-link.json"))
            # A note that the job must leave word of (it is past step 1).
            self.write_trigger("trigger-past.json", trigger_text(1, 1))
        out, err = self.run_attacked(after=after,
                                     left=[".step.json.tmp", ".missed-1-rank-0.json.tmp"])
        self.assertIn("trigger-link.json is ignored: a symbolic link (not followed)", err)

    def test_a_trigger_linked_to_the_jobs_stdin_reads_none_of_it(self):
        lines = 90000

        def feed(pipe):
            for i in range(lines):
                pipe.write(f"line {i}\n")
            pipe.close()

        def after(note):
            os.symlink("/proc/self/fd/0", self.control("trigger-stdin.json"))
            os.symlink(f"/proc/{note['pid']}/fd/0", self.control("trigger-pid-stdin.json"))
        out, err = self.run_attacked(after=after, extra=("--count-stdin",),
                                     stdin=subprocess.PIPE, feed=feed)
        self.assertIn(f"stdin lines {lines}", out)
        self.assertIn("trigger-stdin.json is ignored: a symbolic link (not followed)", err)

    def test_a_linked_job_folder_is_replaced_and_what_it_points_to_is_untouched(self):
        os.makedirs(os.path.join(self.trace_dir, ".chakrashim"))
        os.symlink(os.path.join(self.outside, "folder"), self.control("").rstrip("/"))
        out, err = self.run_attacked()
        self.assertIn("a symbolic link stood where the control folder 0 belongs; removed it", err)

    def test_a_folder_another_user_owns_is_passed_over(self):
        if os.geteuid() != 0:
            self.skipTest("giving a folder to another user needs root")
        self.plant_folder()
        with open(self.control("step.json"), "w") as f:
            f.write("{}")
        os.chown(self.control(""), 65534, 65534)
        theirs = self.control("")
        self.control_name = f"0.uid{os.geteuid()}"
        out, err = self.run_attacked()
        self.assertIn("belongs to uid 65534, not to this job's uid 0: not used", err)
        self.assertTrue(os.path.exists(os.path.join(theirs, "step.json")), "theirs is left alone")

    def test_a_child_that_trains_keeps_the_parents_folder(self):
        # At step 40 the parent runs a child that steps under the same
        # variables (same job, same rank) and waits for it: the child must
        # neither take over the parent's note nor remove its folder at exit.
        child_at = 40

        def after(note):
            resumed = self.wait_for("the parent's steps after its child", lambda: (
                (self.published_step() or {}).get("step", 0) > child_at + 2), timeout=120)
            self.assertTrue(resumed)
            self.assertEqual(self.published_step()["pid"], note["pid"])
        out, err = self.run_attacked(after=after, extra=("--child-at", str(child_at)))
        self.assertIn("child exited 0", out)
        self.assertRegex(err, r"process \d+ on \S+ publishes job 0's step in \S+; this process "
                              r"does not")

    def test_escape_codes_in_a_trigger_name_never_reach_the_terminal(self):
        name = "trigger-\x1b]0;owned\x07\x1b[2J.json"
        out, err = self.run_attacked(after=lambda note: self.write_trigger(name, "nonsense"))
        self.assertNotIn("\x1b", err)
        self.assertNotIn("\x07", err)
        self.assertIn("trigger-\\x1b]0;owned\\x07\\x1b[2J.json is ignored", err)


class UntrustedOutputFolders(CaptureCase):
    """Issue #48, item 5: the output folders (JOB_chakra, JOB_kineto) sit in
    the trace folder too. A member of its group (uid 65534 here, the folder
    shared with mode 2775) puts links where they belong, pointing at a
    folder the job's user can write, or folders of their own: the job never
    writes through them, overwrites nothing there even with
    CHAKRA_OVERWRITE=1, and takes the next free name, said in one line."""

    OTHER = 65534

    def setUp(self):
        super().setUp()
        os.makedirs(self.trace_dir)
        os.chmod(self.trace_dir, 0o2775)
        self.outside = self.trace_dir + ".outside"
        os.makedirs(self.outside)
        self.precious = os.path.join(self.outside, "rank-0.json")
        with open(self.precious, "w") as f:
            f.write('{"precious": true}')

    def plant_link(self, name):
        path = os.path.join(self.trace_dir, name)
        os.symlink(self.outside, path)
        os.lchown(path, self.OTHER, self.OTHER)

    def capture_beside(self, **settings):
        r = run_job("plain_loop.py", [6], job_env(self.trace_dir, CHAKRA_START_STEP=2, CHAKRA_END_STEP=3,
                                                   **settings))
        self.assert_ran(r)
        self.assertEqual(os.listdir(self.outside), ["rank-0.json"])
        with open(self.precious) as f:
            self.assertEqual(f.read(), '{"precious": true}')
        said = [l for l in r.stderr.splitlines() if "not writing into folders that are not this job's" in l]
        self.assertEqual(len(said), 1, r.stderr)
        self.assertIn("traces go to 0_chakra.1 and 0_kineto.1", said[0])
        cap = Capture(self.trace_dir, index=1)
        self.assertEqual(cap.device_steps(), [2, 3])
        self.assertEqual(cap.et_steps(), [2, 3])
        # The pair written, checked alone: the folders behind the links are
        # someone else's.
        checked = run_check([os.path.join(self.trace_dir, "0_kineto.1")])
        self.assertEqual(checked.returncode, 0, checked.stdout + checked.stderr)
        return said[0]

    def test_links_where_the_output_folders_belong_are_never_followed(self):
        self.plant_link("0_chakra")
        self.plant_link("0_kineto")
        said = self.capture_beside(CHAKRA_OVERWRITE=1)
        self.assertIn("0_chakra is a symbolic link (not followed)", said)
        for name in ("0_chakra", "0_kineto"):
            self.assertTrue(os.path.islink(os.path.join(self.trace_dir, name)), "the links stay as they were")

    def test_a_link_at_one_folder_of_the_pair_passes_the_pair_over(self):
        self.plant_link("0_kineto")
        self.assertIn("0_kineto is a symbolic link", self.capture_beside())
        self.assertFalse(os.path.exists(os.path.join(self.trace_dir, "0_chakra")),
                         "nothing made for the pair whose other folder is a link")

    def test_a_folder_of_another_user_is_passed_over(self):
        if os.geteuid() != 0:
            self.skipTest("needs root to give a folder to another user")
        os.makedirs(os.path.join(self.trace_dir, "0_chakra"))
        os.chown(os.path.join(self.trace_dir, "0_chakra"), self.OTHER, self.OTHER)
        self.assertIn("belongs to uid 65534", self.capture_beside())
        self.assertEqual(os.listdir(os.path.join(self.trace_dir, "0_chakra")), [])

    def test_our_folders_in_a_shared_trace_folder_are_sticky(self):
        # Group members may create files beside ours, never remove or
        # rename ours (a claimed .partial stays ours until we rename it).
        r = run_job("plain_loop.py", [6], job_env(self.trace_dir, CHAKRA_START_STEP=2, CHAKRA_END_STEP=3))
        self.assert_ran(r)
        self.assert_valid_capture([2, 3])
        for name in ("0_chakra", "0_kineto"):
            mode = os.stat(os.path.join(self.trace_dir, name)).st_mode
            if mode & 0o022:
                self.assertTrue(mode & 0o1000, f"{name}: {oct(mode)}")


if __name__ == "__main__":
    unittest.main()
