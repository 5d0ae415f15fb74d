"""`chakrashim trigger` against control folders written here, as a job in
on-demand mode would write them (common/files/on_demand_files.h): the
trigger file it writes (name, fields, atomic), how it chooses the window's
first step, its refusals (usage errors, no live job, a step already past, a
folder it cannot write), and --wait while this test plays the ranks, writing
a small valid capture (tests/support/capture_builder.py) into step-S the way
the shim does: .partial files first, the ET published, then the device trace.
"""
import glob
import gzip
import json
import os
import re
import resource
import signal
import socket
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "support"))
import chakra_test as ct  # noqa: E402
from capture_builder import RankCapture  # noqa: E402

JOB = "77"
USAGE_LINE = re.compile(r"^chakrashim trigger: .+ \(see 'chakrashim trigger --help'\)$")
TRIGGER_NAME = re.compile(r"^trigger-(\d+)-(\d+)\.json$")


def trigger(*args, **kw):
    return ct.run([ct.CLI, "trigger", *args], env=ct.clean_env(), **kw)


def start_trigger(*args):
    return subprocess.Popen([ct.CLI, "trigger", *args], env=ct.clean_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def note(step=1040, age=0.0, rate=2.5, restart=0, world_size=2, ranks=None, warmup=0, job=JOB, rank=0,
         gzip_files=False):
    """A step.json document with the fields encode_step_note writes."""
    return {"format": "chakrashim-step/1", "job_id": job, "rank": rank, "step": step,
            "time_s": time.time() - age, "steps_per_s": rate, "pid": 4242, "host": "node1",
            "restart": restart, "world_size": world_size, "ranks": ranks, "warmup": warmup,
            "gzip": gzip_files}


class TriggerCase(unittest.TestCase):
    def setUp(self):
        self.assertTrue(ct.CLI, "CHAKRASHIM_TEST_CLI is not set")
        self.root = ct.temp_dir(self)

    def control(self, job=JOB):
        return os.path.join(self.root, ".chakrashim", job)

    def publish(self, doc=None, job=JOB, text=None, **kw):
        """Writes step.json as the publishing rank does: temp name, rename."""
        d = self.control(job)
        os.makedirs(d, exist_ok=True)
        tmp = os.path.join(d, ".step.json.tmp")
        with open(tmp, "w") as f:
            f.write(text if text is not None else json.dumps(doc or note(job=job, **kw)) + "\n")
        os.rename(tmp, os.path.join(d, "step.json"))

    def triggers(self, job=JOB):
        d = self.control(job)
        return sorted(n for n in os.listdir(d) if n.startswith("trigger-")) if os.path.isdir(d) else []

    def only_trigger(self, job=JOB):
        names = self.triggers(job)
        self.assertEqual(len(names), 1, names)
        with open(os.path.join(self.control(job), names[0])) as f:
            return names[0], json.load(f)

    def assert_usage_error(self, *args, text=None):
        r = trigger(*args)
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        lines = r.stderr.splitlines()
        self.assertEqual(len(lines), 1, r.stderr)
        self.assertRegex(lines[0], USAGE_LINE)
        if text:
            self.assertIn(text, lines[0])
        self.assertEqual(self.triggers(), [], "a usage error wrote a trigger")
        return lines[0]

    def assert_failure(self, *args, text=None):
        """Exit 1, one line on stderr, and no trigger written."""
        r = trigger(*args)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        lines = r.stderr.splitlines()
        self.assertEqual(len(lines), 1, r.stderr)
        self.assertTrue(lines[0].startswith("chakrashim trigger: "), lines[0])
        if text:
            self.assertIn(text, lines[0])
        self.assertEqual(r.stdout, "")
        for job in os.listdir(os.path.join(self.root, ".chakrashim")) if os.path.isdir(
                os.path.join(self.root, ".chakrashim")) else []:
            self.assertEqual(self.triggers(job), [], "a refusal wrote a trigger")
        return lines[0]


class WritesTheTrigger(TriggerCase):
    def test_trigger_file_name_and_fields(self):
        self.publish(step=1040, restart=3)
        before = time.time()
        p = start_trigger(self.root, "--in", "6", "--steps", "7")
        out, err = p.communicate(timeout=60)
        self.assertEqual(p.returncode, 0, out + err)
        self.assertEqual(err, "")
        name, doc = self.only_trigger()
        m = TRIGGER_NAME.match(name)
        self.assertTrue(m, name)
        self.assertEqual(int(m.group(2)), p.pid, "the name carries the writer's pid")
        self.assertLessEqual(abs(int(m.group(1)) / 1e9 - before), 60)
        self.assertEqual(doc["format"], "chakrashim-trigger/1")
        self.assertEqual(doc["first_step"], 1046)
        self.assertEqual(doc["steps"], 7)
        self.assertEqual(doc["restart"], 3, "the job's restart count is copied")
        self.assertLessEqual(abs(doc["requested_s"] - before), 60)
        self.assertRegex(doc["requested_by"], r"^[^@\s]+@[^@\s]+$")
        # Nothing but step.json and the trigger: the temporary name is gone.
        self.assertEqual(sorted(os.listdir(self.control())), ["step.json", name])
        window = os.path.join(self.root, "step-1046")
        lines = out.splitlines()
        self.assertEqual(len(lines), 2, out)
        self.assertEqual(lines[0], "job 77: asked for steps 1046-1052 (7 steps) from ranks 0-1, into %s/" % window)
        self.assertRegex(lines[1], r"^the job is at step 1040 \(2\.5 steps/s, published [0-9.]+ s ago by pid 4242 "
                                   r"on node1\): the window begins in about [0-9.]+ s$")

    def test_at_a_step(self):
        self.publish(step=1040)
        r = trigger(self.root, "--at", "1100")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        _, doc = self.only_trigger()
        self.assertEqual((doc["first_step"], doc["steps"]), (1100, 5))
        self.assertIn("into %s/" % os.path.join(self.root, "step-1100"), r.stdout)

    def test_lead_chosen_from_the_published_rate(self):
        # About 3 s ahead, at least 2 steps: ceil(3 * rate).
        for rate, lead in ((10.0, 30), (2.5, 8), (0.2, 2), (0.0, 2), (1000.0, 3000)):
            with self.subTest(rate=rate):
                for n in self.triggers():
                    os.remove(os.path.join(self.control(), n))
                self.publish(step=500, rate=rate)
                r = trigger(self.root)
                self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
                self.assertNotIn("warning", r.stderr)
                _, doc = self.only_trigger()
                self.assertEqual(doc["first_step"], 500 + lead)

    def test_rate_measured_when_the_job_has_published_none(self):
        # A job's first seconds: no rate yet. The command watches for the
        # next note and measures the rate between the two.
        first = note(step=500, rate=0)
        self.publish(first)
        p = start_trigger(self.root)
        self.addCleanup(lambda: p.poll() is None and p.kill())
        # The newer note only once the command has read the first (it says
        # so before it watches): a fixed sleep here lost the race to the
        # command's start on a loaded machine (issue #39).
        said = p.stdout.readline()
        self.assertIn("publishes no rate yet: watching its step.json for up to 2.5 s", said)
        self.publish(dict(first, step=505, time_s=first["time_s"] + 1.0))
        out, err = p.communicate(timeout=60)
        out = said + out
        self.assertEqual(p.returncode, 0, out + err)
        _, doc = self.only_trigger()
        self.assertEqual(doc["first_step"], 505 + 15, "5 steps/s: 3 s is 15 steps from the newer note's step")
        self.assertIn("the job is at step 505 (5.0 steps/s measured between two notes, published", out)

    def test_unknown_rate_says_steps_not_seconds(self):
        self.publish(step=500, rate=0)
        r = trigger(self.root)
        self.assertIn("(rate not known yet, published", r.stdout)
        self.assertIn("the window begins 2 steps after the published one", r.stdout)

    def test_short_in_is_written_with_a_warning(self):
        self.publish(step=1000, rate=10.0)
        r = trigger(self.root, "--in", "5")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        _, doc = self.only_trigger()
        self.assertEqual(doc["first_step"], 1005)
        self.assertIn("chakrashim trigger: warning: --in 5 is under 2 s of steps at 10.0 steps/s", r.stderr)
        self.assertIn("some ranks may be past step 1005 when they look", r.stderr)
        self.assertIn("--in 30 leaves about 3 s", r.stderr)
        # 2 s of steps is enough: no warning.
        r = trigger(self.root, "--in", "20")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stderr, "")

    def test_close_at_warns_too(self):
        self.publish(step=1000, rate=10.0)
        r = trigger(self.root, "--at", "1003")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("warning: --at 1003 is only 3 steps ahead, under 2 s of steps at 10.0 steps/s", r.stderr)
        self.assertIn("--at 1030 or later", r.stderr)

    def test_eta_counts_the_notes_age(self):
        # 3 steps at 2.5 steps/s is 1.2 s, and the note is 5 s old.
        self.publish(step=1000, rate=2.5, age=5)
        r = trigger(self.root, "--in", "3")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("the window may have begun already on the ranks (they capture nothing if so)", r.stdout)

    def test_warmup_steps_come_before_the_kept_steps(self):
        self.publish(step=1040, warmup=2, rate=2.5)
        r = trigger(self.root, "--in", "8")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("asked for steps 1050-1054 (5 steps, after warm-up steps 1048-1049)", r.stdout)
        self.assertIn("into %s/" % os.path.join(self.root, "step-1048"), r.stdout)
        _, doc = self.only_trigger()
        self.assertEqual(doc["first_step"], 1048, "the trigger names the window's first step, warm-up included")

    def test_which_ranks(self):
        self.publish(world_size=4, ranks="0,2")
        r = trigger(self.root)
        self.assertIn("from ranks 0,2 (CHAKRA_RANKS=0,2 of world size 4)", r.stdout)
        self.publish(world_size=-1, rank=0)
        r = trigger(self.root, "--steps", "1")
        self.assertIn("asked for step 1048 (1 step) from rank 0 (one process)", r.stdout)

    def test_one_live_job_among_stale_ones_is_taken(self):
        self.publish(job="old", step=7, age=3600)
        self.publish(job=JOB, step=1040)
        r = trigger(self.root, "--in", "8")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(self.triggers("old"), [])
        self.assertEqual(len(self.triggers()), 1)

    def test_job_chosen_with_job(self):
        self.publish(job="77", step=1040)
        self.publish(job="78", step=10)
        line = self.assert_usage_error(self.root, text="several jobs publish their step under")
        self.assertIn("77 (step 1040), 78 (step 10); choose one with --job ID", line)
        r = trigger(self.root, "--job", "78", "--in", "8")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(self.triggers("77"), [])
        _, doc = self.only_trigger("78")
        self.assertEqual(doc["first_step"], 18)


class Refusals(TriggerCase):
    def test_usage_errors(self):
        self.publish()
        cases = [
            (("--steps", "0"), "--steps takes 1 to 100000, not '0'"),
            (("--steps", "100001"), "--steps takes 1 to 100000, not '100001'"),
            (("--steps", "five"), "--steps takes 1 to 100000, not 'five'"),
            (("--steps",), "--steps needs a value"),
            (("--in", "0"), "--in takes a number of steps, 1 or more, not '0'"),
            (("--in", "-3"), "--in takes a number of steps"),
            (("--at", "x"), "--at takes a step number, not 'x'"),
            (("--in", "3", "--at", "1050"), "--in and --at both say where the window begins: give one"),
            (("--stpes", "3"), "unknown option '--stpes' (did you mean --steps?)"),
            (("--timeout", "5"), "--timeout is how long --wait waits: give --wait too"),
            (("--wait", "--timeout", "0"), "--timeout takes seconds"),
            (("--job", "a/b"), "--job takes a job id"),
            ((self.root,), "give one trace folder, not"),
        ]
        for args, text in cases:
            with self.subTest(args=args):
                self.assert_usage_error(self.root, *args, text=text)
        r = trigger()
        self.assertEqual(r.returncode, 2)
        self.assertIn("give the trace folder the job writes to", r.stderr)

    def test_help(self):
        r = trigger("--help")
        self.assertEqual(r.returncode, 0)
        self.assertTrue(r.stdout.startswith("usage: chakrashim trigger [options] TRACE_DIR\n"))
        self.assertIn("chakrashim trigger /traces --steps 5 --wait", r.stdout)
        self.assertIn("chakrashim trigger /traces --at 12000 --steps 20", r.stdout)
        top = ct.run([ct.CLI, "--help"], env=ct.clean_env())
        self.assertIn("  trigger TRACE_DIR ", top.stdout)
        typo = ct.run([ct.CLI, "triger"], env=ct.clean_env())
        self.assertEqual(typo.returncode, 2)
        self.assertIn("(did you mean trigger?)", typo.stderr)

    def test_no_control_folder(self):
        self.assert_failure(self.root, text="no job publishes its step under %s: %s holds no .chakrashim folder: "
                            "no on-demand job runs there now; one that ran has ended" % (self.root, self.root))

    def test_no_step_json(self):
        os.makedirs(self.control())
        self.assert_failure(self.root, text="no job publishes its step under %s: no %s/.chakrashim/JOB/step.json "
                            "(job folders without one: 77" % (self.root, self.root))

    def test_stale_step_json(self):
        self.publish(step=1040, age=95)
        line = self.assert_failure(self.root, text="no job publishes its step under %s: job 77's step.json is "
                                   % self.root)
        self.assertRegex(line, r"is (9[4-9]|10\d) s old \(step 1040, pid 4242 on node1\): the job is gone or hung$")

    def test_a_local_job_killed_without_removing_its_step_json_is_gone_at_once(self):
        # SIGKILL, or SIGTERM while no window is open: no exit hook removes
        # step.json. On this host the command sees the process is gone once
        # the note is older than the 10 s heartbeat, without the 60 s wait.
        dead = subprocess.Popen(["true"])
        dead.wait()
        host = socket.gethostname()
        self.publish(doc=dict(note(age=20), pid=dead.pid, host=host))
        line = self.assert_failure(self.root, text="no job publishes its step under %s: " % self.root)
        self.assertIn("its process (step 1040, pid %d on %s) is gone: it was killed before it could "
                      "remove it" % (dead.pid, host), line)
        # A younger note is taken as live, whatever kill() says (the job may
        # run in another PID namespace).
        self.publish(doc=dict(note(age=2), pid=dead.pid, host=host))
        r = trigger(self.root, "--in", "8")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        # And one of another host is judged by its age alone.
        self.publish(doc=dict(note(age=20), pid=dead.pid, host="elsewhere"))
        r = trigger(self.root, "--in", "8")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)

    def test_step_json_that_does_not_decode(self):
        path = os.path.join(self.control(), "step.json")
        bad = dict(note())
        del bad["step"]
        self.publish(text=json.dumps(bad))
        self.assert_failure(self.root, text="cannot read %s: \"step\" is missing or not a whole number >= 0" % path)
        self.publish(text="{not json")
        self.assert_failure(self.root, text="cannot read %s: not a JSON object" % path)
        self.publish(text=json.dumps(dict(note(), format="chakrashim-step/2")))
        self.assert_failure(self.root, text="\"format\" is not \"chakrashim-step/1\"")

    def test_job_that_is_not_there(self):
        self.publish()
        self.assert_failure(self.root, "--job", "78", text="there is no %s/.chakrashim/78 (jobs there: 77)"
                            % self.root)

    def test_several_stale_jobs(self):
        self.publish(job="77", age=100)
        self.publish(job="78", age=200, step=9)
        line = self.assert_failure(self.root, text="no job publishes its step under")
        self.assertIn("job 77's step.json is", line)
        self.assertIn("job 78's step.json is", line)
        self.assertIn("(step 9, pid 4242 on node1)", line)

    def test_at_a_step_already_past(self):
        self.publish(step=1040)
        for at in ("1040", "1000", "0"):
            with self.subTest(at=at):
                self.assert_failure(self.root, "--at", at, text="job 77 is already at step 1040, past --at %s" % at)

    def test_window_past_the_largest_step(self):
        self.publish(step=2**64 - 10)
        self.assert_failure(self.root, "--in", "8", text="the window would end past the largest step number")

    def test_control_folder_that_cannot_be_written(self):
        # Run as root, permissions stop nothing: a file-size limit of 0 makes
        # the trigger's write fail (EFBIG) the way a full or read-only file
        # system would, after the temporary file was created.
        self.publish()

        def no_writes():
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))

        r = ct.run([ct.CLI, "trigger", self.root], env=ct.clean_env(), preexec_fn=no_writes)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        lines = r.stderr.splitlines()
        self.assertEqual(len(lines), 1, r.stderr)
        self.assertRegex(lines[0], r"^chakrashim trigger: cannot write the trigger for job 77: cannot write %s/"
                                   r"\.trigger-\d+-\d+\.json\.[0-9a-f]{16}\.tmp: File too large$" % re.escape(self.control()))
        self.assertEqual(os.listdir(self.control()), ["step.json"], "the temporary file is removed")

    def test_control_folder_under_a_file(self):
        # TRACE_DIR is a file: there is no control folder to read, let alone write.
        path = os.path.join(self.root, "file")
        with open(path, "w") as f:
            f.write("x")
        self.assert_failure(path, text="there is no folder %s" % path)


class Wait(TriggerCase):
    """--wait: this test plays the ranks."""

    def wait_for_trigger(self, proc, job=JOB):
        deadline = time.time() + 30
        while time.time() < deadline:
            names = self.triggers(job)
            if names:
                with open(os.path.join(self.control(job), names[0])) as f:
                    return json.load(f)
            if proc.poll() is not None:
                self.fail("trigger exited early: %s %s" % proc.communicate())
            time.sleep(0.05)
        self.fail("no trigger written")

    def window(self, first_step):
        return os.path.join(self.root, "step-%d" % first_step)

    def open_files(self, window, ranks, host=True, device=True):
        """A window opens on each rank: its folders and claimed .partial files."""
        for r in ranks:
            for sub, on in (("%s_chakra" % JOB, host), ("%s_kineto" % JOB, device)):
                if on:
                    os.makedirs(os.path.join(window, sub), exist_ok=True)
                    open(os.path.join(window, sub, "rank-%d.json.partial" % r), "w").close()

    def publish_et(self, window, cap):
        """The ET published (rename); the device trace's claimed .partial goes."""
        et = os.path.join(window, "%s_chakra" % JOB, "rank-%d.json" % cap.rank)
        with open(et + ".partial", "w") as f:
            f.write(cap.et_text())
        os.rename(et + ".partial", et)
        dev = os.path.join(window, "%s_kineto" % JOB, "rank-%d.json.partial" % cap.rank)
        if os.path.exists(dev):
            os.remove(dev)

    def publish_device(self, window, cap, gz=False):
        dev = os.path.join(window, "%s_kineto" % JOB, "rank-%d.json%s" % (cap.rank, ".gz" if gz else ""))
        text = cap.device_text()
        with (gzip.open(dev + ".partial", "wt") if gz else open(dev + ".partial", "w")) as f:
            f.write(text)
        os.rename(dev + ".partial", dev)

    def write_rank(self, window, rank, world_size, first_step, gz=False):
        cap = RankCapture(rank, world_size, steps=range(first_step, first_step + 2))
        self.open_files(window, [rank])
        self.publish_et(window, cap)
        self.publish_device(window, cap, gz)

    def start_waiting(self, *args):
        """`chakrashim trigger ROOT ARGS` started, killed at the end of the
        test if it still runs, once it has written its trigger: (the
        process, the trigger's document)."""
        p = start_trigger(self.root, *args)
        self.addCleanup(lambda: p.poll() is None and p.kill())
        return p, self.wait_for_trigger(p)

    def assert_still_waiting(self, proc, seconds=1.2):
        time.sleep(seconds)
        if proc.poll() is not None:
            self.fail("--wait ended early: %s %s" % proc.communicate())

    def test_wait_until_every_rank_has_written_then_check(self):
        self.publish(step=1040, world_size=2)
        p, doc = self.start_waiting("--in", "8", "--steps", "2", "--wait", "--timeout", "60")
        window = self.window(doc["first_step"])
        self.assertEqual(doc["first_step"], 1048)
        caps = [RankCapture(r, 2, steps=(1048, 1049)) for r in (0, 1)]
        self.open_files(window, [0, 1])
        self.assert_still_waiting(p)  # both ranks still .partial
        for c in caps:
            self.publish_et(window, c)
        self.assert_still_waiting(p)  # ETs final, device traces not yet: still writing
        self.publish_device(window, caps[0])
        self.assert_still_waiting(p)  # rank 1 not done
        self.publish_device(window, caps[1], gz=True)
        out, err = p.communicate(timeout=30)
        self.assertEqual(p.returncode, 0, out + err)
        self.assertIn("waiting up to 60 s for ranks 0-1 to write %s/" % window, out)
        self.assertRegex(out, r"window complete after [0-9.]+ s: ranks 0-1 wrote their files into %s/ "
                              r"\(77_chakra, 77_kineto\)" % re.escape(window))
        self.assertIn("chakrashim check %s:\n" % window, out)
        self.assertIn("rank 0: ok; steps 1048-1049 in both files", out)
        self.assertIn("rank 1: ok;", out)
        self.assertIn("2 ranks, 0 errors, 0 warnings", out)

    def test_wait_for_the_ranks_chakra_ranks_names(self):
        self.publish(step=100, world_size=4, ranks="1,3")
        p, doc = self.start_waiting("--in", "8", "--wait", "--timeout", "60")
        window = self.window(doc["first_step"])
        caps = [RankCapture(r, 4, steps=(108, 109), ranks_filter="1,3") for r in (1, 3)]
        for c in caps:
            self.open_files(window, [c.rank])
            self.publish_et(window, c)
            self.publish_device(window, c)
        out, err = p.communicate(timeout=30)
        self.assertEqual(p.returncode, 0, out + err)
        self.assertIn("waiting up to 60 s for ranks 1,3 to write", out)
        self.assertIn("ranks 1,3 wrote their files into", out)

    def timed_out(self, *args):
        """`chakrashim trigger ARGS` on this folder, which must time out
        (exit 1, "timed out after"): its stdout."""
        r = trigger(self.root, *args)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("timed out after", r.stdout)
        return r.stdout

    def test_files_of_an_earlier_run_do_not_count(self):
        self.publish(step=1040, world_size=1)
        window = self.window(1048)
        self.write_rank(window, 0, 1, 1048)  # left by an earlier run of job 77
        out = self.timed_out("--in", "8", "--wait", "--timeout", "2")
        self.assertIn("no rank wrote anything (rank 0 expected)", out)

    def test_timeout_names_the_missing_ranks_and_checks_what_is_there(self):
        self.publish(step=1040, world_size=4)
        # The files must come within the timeout after the trigger, and the
        # time said is when the command looked last: a 3 s timeout and
        # "3.x s" were verdicts on timing on a loaded machine (issue #39).
        p, doc = self.start_waiting("--in", "8", "--wait", "--timeout", "10")
        window = self.window(doc["first_step"])
        self.write_rank(window, 0, 4, 1048)
        self.write_rank(window, 2, 4, 1048)
        self.open_files(window, [3])  # rank 3 opened its window and never finished
        out, err = p.communicate(timeout=60)
        self.assertEqual(p.returncode, 1, out + err)
        m = re.search(r"timed out after ([0-9.]+) s waiting for %s/: rank 1 of 0-3 wrote nothing; rank 3 is still "
                      r"writing" % re.escape(window), out)
        self.assertTrue(m, out)
        self.assertGreaterEqual(float(m.group(1)), 10.0, "it gave up before its timeout")
        self.assertIn("chakrashim check %s:\n" % window, out)
        # check itself says which ranks of the world are missing.
        self.assertIn("rank 1: error [ranks.missing] rank 1 of world size 4 has no files", out)
        self.assertIn("rank 3: error [files.partial]", out)

    def test_a_rank_that_says_it_missed_the_window_ends_the_wait_early(self):
        # Rank 1 was past the first step when it looked: it leaves a missed
        # note (the shim's window::Missed) instead of files, and --wait stops
        # at once rather than at the timeout, with that rank's own words.
        self.publish(step=1040, world_size=2)
        p, doc = self.start_waiting("--in", "8", "--wait", "--timeout", "60")
        window = self.window(doc["first_step"])
        self.write_rank(window, 0, 2, 1048)
        self.assert_still_waiting(p)  # rank 1 said nothing yet
        why = ("the trigger %s asks for steps 1048-1052, but this rank is at step 1060 already: "
               "it captures nothing for it" % self.triggers()[0])
        with open(os.path.join(self.control(), ".m.tmp"), "w") as f:
            json.dump({"format": "chakrashim-missed/1", "first_step": 1048, "rank": 1, "why": why}, f)
        os.rename(os.path.join(self.control(), ".m.tmp"),
                  os.path.join(self.control(), "missed-1048-rank-1.json"))
        out, err = p.communicate(timeout=50)
        self.assertEqual(p.returncode, 1, out + err)
        self.assertRegex(out, r"window incomplete after [0-9.]+ s: rank 1 captured nothing for it "
                              r"\(rank 1: %s\)" % re.escape(why))
        self.assertIn("rank 1: error [ranks.missing]", out)

    def test_a_missed_note_of_another_window_or_an_earlier_run_does_not_count(self):
        self.publish(step=1040, world_size=1)
        for name, first in (("missed-1048-rank-0.json", 1048), ("missed-2000-rank-0.json", 1048)):
            with open(os.path.join(self.control(), name), "w") as f:
                json.dump({"format": "chakrashim-missed/1", "first_step": first, "rank": 0,
                           "why": "old"}, f)
        out = self.timed_out("--in", "8", "--wait", "--timeout", "2")
        self.assertNotIn("captured nothing", out)

    def test_timeout_with_nothing_written(self):
        self.publish(step=1040, world_size=2)
        r = trigger(self.root, "--wait", "--timeout", "1")
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("no rank wrote anything (ranks 0-1 expected)", r.stdout)
        self.assertRegex(r.stdout, r"nothing under .*/step-1048/ to check")

    def test_wait_stops_when_the_job_exits(self):
        self.publish(step=1040, world_size=2)
        p, doc = self.start_waiting("--in", "8", "--wait", "--timeout", "120")
        window = self.window(doc["first_step"])
        self.write_rank(window, 0, 2, 1048)
        self.open_files(window, [1])
        self.assert_still_waiting(p, 0.6)
        # The job exits: step.json goes; rank 1 gives up its .partial files.
        os.remove(os.path.join(self.control(), "step.json"))
        self.assert_still_waiting(p, 0.6)  # a rank is still writing: the exit gets its grace
        for f in glob.glob(os.path.join(window, "*", "rank-1.json.partial")):
            os.remove(f)
        started = time.time()
        out, err = p.communicate(timeout=60)
        # Under the 30 s grace the exit would otherwise get: the last
        # .partial going ended the wait (10 s was tight under load, #39).
        self.assertLess(time.time() - started, 25)
        self.assertEqual(p.returncode, 1, out + err)
        self.assertIn("job 77 exited (its step.json is gone) before the window was complete: rank 1 of 0-1 "
                      "wrote nothing", out)
        self.assertIn("rank 1: error [ranks.missing]", out)

    def test_wait_stops_when_the_job_restarts(self):
        self.publish(step=1040, world_size=1, restart=0)
        p, _ = self.start_waiting("--in", "8", "--wait", "--timeout", "120")
        self.publish(step=3, world_size=1, restart=1)
        out, err = p.communicate(timeout=30)
        self.assertEqual(p.returncode, 1, out + err)
        self.assertIn("job 77 restarted (restart count 1; the trigger was for 0)", out)

    def test_wait_stops_when_the_job_stops_publishing(self):
        self.publish(step=1040, world_size=1)
        p, _ = self.start_waiting("--in", "8", "--wait", "--timeout", "120")
        self.publish(step=1046, world_size=1, age=61)  # as a hung job's note ages
        out, err = p.communicate(timeout=30)
        self.assertEqual(p.returncode, 1, out + err)
        self.assertRegex(out, r"job 77 stopped publishing its step \(its last note, step 1046, pid 4242 on node1, "
                              r"is 6\d s old\): no rank wrote anything \(rank 0 expected\)")

    def test_job_of_one_process_gzip(self):
        self.publish(step=10, world_size=-1, rank=0, gzip_files=True)
        p, _ = self.start_waiting("--in", "4", "--wait", "--timeout", "60")
        self.write_rank(self.window(14), 0, 1, 14, gz=True)
        out, err = p.communicate(timeout=30)
        self.assertEqual(p.returncode, 0, out + err)
        self.assertIn("rank 0 wrote its files into", out)


PRELOAD = os.environ.get("CHAKRASHIM_TEST_PRELOAD", "")
PACED = os.path.join(ct.SOURCE_DIR, "tests", "e2e", "jobs", "paced_loop.py")


@unittest.skipUnless(ct.WITH_TORCH and PRELOAD, "needs torch and the preload (CHAKRA_WITH_TORCH)")
class RealJob(TriggerCase):
    """The whole path: a 2-rank DDP job (gloo) under the preload in
    on-demand mode, the command asking as soon as the job publishes, and
    --wait judging the real writer's files (ET first, then device trace)."""

    def test_trigger_and_wait_on_a_running_two_rank_job(self):
        stop = os.path.join(ct.temp_dir(self), "stop")
        jobs = ct.start_ranks([ct.PYTHON, PACED, "100000", "--step-ms", "30", "--stop-file", stop, "--ddp"],
                              ct.clean_env(LD_PRELOAD=PRELOAD, CHAKRA_PROFILE=1, CHAKRA_ON_DEMAND=1,
                                           CHAKRA_TRACE_DIR=self.root, CHAKRA_JOB_ID="e2e"),
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)

        def end_jobs():
            open(stop, "w").close()
            for j in jobs:
                try:
                    j.communicate(timeout=120)
                except subprocess.TimeoutExpired:
                    j.kill()
                    j.communicate()

        self.addCleanup(end_jobs)
        step_file = os.path.join(self.control("e2e"), "step.json")
        deadline = time.time() + 180
        while not os.path.exists(step_file):
            self.assertLess(time.time(), deadline, "the job never published its step")
            for j in jobs:
                if j.poll() is not None:
                    self.fail("a rank ended early: %s" % j.communicate()[1])
            time.sleep(0.1)
        r = trigger(self.root, "--steps", "3", "--wait", "--timeout", "120", timeout=240)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        m = re.search(r"into (\S+)/step-(\d+)/\n", r.stdout)
        self.assertTrue(m, r.stdout)
        first = int(m.group(2))
        self.assertIn("window complete after", r.stdout)
        self.assertIn("ranks 0-1 wrote their files into", r.stdout)
        self.assertIn("rank 0: ok; steps %d-%d in both files" % (first, first + 2), r.stdout)
        self.assertIn("rank 1: ok; steps %d-%d in both files" % (first, first + 2), r.stdout)
        self.assertIn("2 ranks, 0 errors", r.stdout)
        end_jobs()
        for j in jobs:
            self.assertEqual(j.returncode, 0, j.stderr)
        self.assertFalse(os.path.exists(step_file), "the job removes its step.json when it exits")


if __name__ == "__main__":
    unittest.main()
