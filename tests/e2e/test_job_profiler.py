"""A job that runs its own torch.profiler (a schedule, prof.step() every
iteration; issue #34 item 3). torch opens a record "ProfilerStep#N" in
every step of the job, numbered by the job's profiler. The capture must
still hold exactly one ProfilerStep#N per captured step, in order, in the
device trace, and none of the job's under that name in either file (they
are written as job:ProfilerStep#N, alike in both, so the rf_id join keeps
them); `chakrashim check` passes; the job's own profiler output is what it
is without chakrashim.
"""
import json
import os
import re
import subprocess
import unittest

from e2e_case import CaptureCase
from harness import CLI, RUN_MARKER, Capture, job_env, run_job, run_plain

STEP = re.compile(r"^ProfilerStep#(\d+)$")
JOB_STEP = re.compile(r"^job:ProfilerStep#(\d+)$")


def job_output(stdout):
    """The job's own profile, as it printed it: its steps and op count."""
    return [l for l in stdout.splitlines() if l.startswith("job ")]


class JobProfilerTest(CaptureCase):
    def run_case(self, start, window, settings=None):
        out = os.path.join(os.path.dirname(self.trace_dir), "job-out")
        env = job_env(self.trace_dir, CHAKRA_START_STEP=window[0], CHAKRA_END_STEP=window[-1],
                      **(settings or {}))
        r = run_job("job_profiler.py", (10, start, out), env)
        self.assert_ran(r)
        return r, out

    def assert_one_step_each(self, cap, window, job_steps):
        # The device trace: our ProfilerStep#N, one per captured step, in
        # time order; the job's under their new name, and their numbers.
        ours = [int(STEP.match(e["name"]).group(1))
                for e in sorted(cap.events, key=lambda e: e.get("ts", 0))
                if e.get("ph") == "X" and STEP.match(e.get("name", ""))]
        self.assertEqual(ours, window, "ProfilerStep#N in the device trace, by start time")
        jobs = {e["args"]["Record function id"]: int(JOB_STEP.match(e["name"]).group(1))
                for e in cap.events if JOB_STEP.match(e.get("name", ""))}
        self.assertEqual(sorted(jobs.values()), job_steps, "the job's own step records, renamed")
        # The ET: no ProfilerStep#N node at all (we write none); the job's
        # nodes have the same new name as their spans.
        self.assertEqual([n["name"] for n in cap.et["nodes"] if n["name"].startswith("ProfilerStep")], [])
        nodes = {cap.attr(n, "rf_id"): n["name"] for n in cap.et["nodes"] if JOB_STEP.match(n["name"])}
        self.assertTrue(nodes, "the ET has the job's step records")
        for rf_id, name in nodes.items():
            self.assertIn(rf_id, jobs, name)
            self.assertEqual(name, "job:ProfilerStep#%d" % jobs[rf_id])
        self.assertEqual(cap.et_steps(), window, "outermost Optimizer.step# nodes in the ET")

    def assert_report_steps(self, window):
        r = subprocess.run([CLI, "report", "--json", self.trace_dir], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        doc = json.loads(r.stdout)
        steps = doc["groups"][0]["ranks"][0]["steps"]
        self.assertEqual([s["step"] for s in steps], window, r.stdout[:2000])

    def test_the_jobs_profiler_counting_from_the_same_step(self):
        # The job's profiler starts at iteration 0: its ProfilerStep#N is
        # iteration N, the same numbers as ours (the 3,4,5,6,3,4,5).
        window = [3, 4, 5, 6]
        r, _ = self.run_case(0, window)
        cap = Capture(self.trace_dir)
        # The job's record of step 6 ends at its prof.step(), after the
        # window closed at step 6's optimizer step: it is closed at the
        # window's edge (issue #49), as any scope open there.
        self.assert_one_step_each(cap, window, [3, 4, 5, 6])
        self.assert_check_passes()
        self.assert_report_steps(window)

    def test_the_jobs_profiler_counting_from_another_step(self):
        # It starts at iteration 3, counting from 0: the 3,0,4,1,5.
        window = [3, 4, 5]
        r, _ = self.run_case(3, window)
        cap = Capture(self.trace_dir)
        self.assert_one_step_each(cap, window, [0, 1, 2])  # #2 open at the window's edge, closed there
        self.assert_check_passes()
        self.assert_report_steps(window)

    def test_torchs_et_recorder_gets_the_same_names(self):
        # torch's observer names the job's records itself; the bridge copies
        # its ET with them renamed, as the native recorder writes them.
        window = [3, 4, 5]
        r, _ = self.run_case(3, window, dict(CHAKRA_ET_RECORDER="torch"))
        cap = Capture(self.trace_dir)
        self.assert_one_step_each(cap, window, [0, 1, 2])
        self.assertEqual(sorted(os.listdir(os.path.dirname(cap.et_path))), [RUN_MARKER, "rank-0.json"])
        self.assert_check_passes()

    def test_the_jobs_own_profiler_output_is_as_without_us(self):
        for start in (0, 3):
            with self.subTest(start=start):
                self.trace_dir = os.path.join(os.path.dirname(self.trace_dir), "traces-%d" % start)
                r, out = self.run_case(start, [3, 4, 5])
                plain_out = os.path.join(os.path.dirname(self.trace_dir), "plain-out-%d" % start)
                p = run_plain("job_profiler.py", (10, start, plain_out))
                self.assert_ran(p)
                self.assertEqual(job_output(r.stdout), job_output(p.stdout))
                self.assertIn("job steps: ['ProfilerStep#2', 'ProfilerStep#3', 'ProfilerStep#4']", r.stdout)

                def own(folder):
                    with open(os.path.join(folder, "job_trace.json")) as f:
                        events = json.load(f)["traceEvents"]
                    return (sorted(e["name"] for e in events if e.get("name", "").startswith("ProfilerStep")),
                            sorted({e["name"] for e in events if e.get("cat") == "cpu_op"}))

                self.assertEqual(own(out), own(plain_out), "the job's exported trace")


if __name__ == "__main__":
    unittest.main()
