"""DeepSpeed jobs (issue #54): a step is one engine step, whatever the
parameter groups, ZeRO stage or gradient accumulation.

Runs tests/e2e/jobs/deepspeed_job.py (2 ranks, gloo, CPU) with DeepSpeed's
Python: $CHAKRASHIM_DEEPSPEED_PYTHON, or the environment that
scripts/deepspeed-env.sh makes (~/.cache/deepspeed-venv). Skipped, with the
reason, where DeepSpeed is not importable there (CI does not install it).

Each captured step must hold exactly its iteration, judged by the job's own
"iteration N" record, on every rank, in both files; the job's stdout and
exit code stay as without the shim; check, report, link and convert accept
each capture.
"""
import json
import os
import re
import shutil
import subprocess
import unittest

from e2e_case import CaptureCase
from harness import CLI, JOBS, Capture, clean_env, free_port, job_env, run

DS_ENV = dict(DS_ACCELERATOR="cpu")
WINDOW = (3, 5)
ITERATIONS = 8


def deepspeed_python():
    """DeepSpeed's Python and None, or None and why there is none."""
    py = os.environ.get("CHAKRASHIM_DEEPSPEED_PYTHON") or os.path.expanduser("~/.cache/deepspeed-venv/bin/python")
    py = shutil.which(py) or py
    if not os.path.exists(py):
        return None, f"no DeepSpeed environment at {py} (scripts/deepspeed-env.sh makes one)"
    r = subprocess.run([py, "-c", "import deepspeed"], env=clean_env(**DS_ENV), capture_output=True, text=True,
                       timeout=300)
    if r.returncode != 0:
        return None, f"{py} cannot import deepspeed: {(r.stderr.strip().splitlines() or ['?'])[-1]}"
    return py, None


DS_PY, WHY = deepspeed_python()


def job_lines(stdout):
    """The job's own lines, sorted: torchrun passes both ranks' output
    through one pipe, where one rank's line may land inside another's."""
    return sorted(re.findall(r"rank \d+ iteration \d+ loss [-0-9.]+ global_steps \d+", stdout))


@unittest.skipIf(DS_PY is None, WHY)
class DeepSpeedSteps(CaptureCase):
    plain = {}  # (zero, groups, gas) -> the job's lines without the shim

    def launch(self, zero, groups, gas, env):
        # groups 0: the pipeline job (two groups, two micro-batches an iteration).
        job = ["deepspeed_pipe_job.py", "--zero", str(zero)] if groups == 0 else \
            ["deepspeed_job.py", "--zero", str(zero), "--groups", str(groups), "--gas", str(gas)]
        cmd = [DS_PY, "-m", "torch.distributed.run", "--nproc-per-node", "2", "--master-addr", "127.0.0.1",
               "--master-port", str(free_port()), os.path.join(JOBS, job[0]), *job[1:],
               "--iterations", str(ITERATIONS)]
        return run(cmd, {**env, **DS_ENV}, timeout=600)

    def capture(self, zero, groups, gas):
        key = (zero, groups, gas)
        if key not in self.plain:
            r = self.launch(zero, groups, gas, clean_env())
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            type(self).plain[key] = job_lines(r.stdout)
        r = self.launch(zero, groups, gas, job_env(self.trace_dir, CHAKRA_START_STEP=WINDOW[0],
                                                   CHAKRA_END_STEP=WINDOW[1]))
        self.assert_ran(r)
        self.assertEqual(job_lines(r.stdout), self.plain[key], "the job's stdout, as without the shim")
        self.assertIn("counting DeepSpeed engine steps", r.stderr)
        self.assertIn(f"captured steps [{WINDOW[0]}-{WINDOW[1]}]", r.stderr)
        return r

    def assert_each_step_holds_its_iteration(self, rank):
        steps = list(range(WINDOW[0], WINDOW[1] + 1))
        cap = Capture(self.trace_dir, rank=rank)
        self.assertEqual(cap.device_steps(), steps, f"rank {rank}: ProfilerStep#N in the device trace")
        # One outer step a step, DeepSpeed's: the inner AdamW steps (one per
        # parameter group) nest inside it.
        markers = cap.outermost_markers()
        self.assertEqual([n["name"] for n in markers], ["Optimizer.step#DeepSpeedEngine.step"] * len(steps))
        self.assertEqual(cap.et_steps(), steps, f"rank {rank}: the ET's outer steps")
        bounds = {int(e["name"].split("#")[1]): (e["ts"], e["ts"] + e["dur"]) for e in cap.step_events()}
        iterations = {int(e["name"].split()[1]): e for e in cap.named("iteration ")}
        # The iteration before the window closed inside its engine step: at
        # most its last microseconds (the record's exit) lie in the first step.
        self.assertEqual(sorted(n for n in iterations if n in steps), steps, f"rank {rank}: iterations")
        for n in steps:
            it = iterations[n]
            lo, hi = bounds[n]
            self.assertTrue(lo <= it["ts"] <= hi, f"rank {rank}: iteration {n} starts in step {n}")
            # Every op of the iteration lies in its step: the engine step's
            # gathers after the inner AdamW steps too (they used to open the
            # next step). The iteration's own record ends just after the
            # engine step, which is where its step ends.
            inside = [e for e in cap.events if e.get("cat") in ("cpu_op", "user_annotation")
                      and it["ts"] <= e["ts"] and e["ts"] + e["dur"] <= it["ts"] + it["dur"] and e is not it]
            self.assertGreater(len(inside), 10)
            outside = [e["name"] for e in inside if not (lo <= e["ts"] and e["ts"] + e["dur"] <= hi + 1e-3)]
            self.assertEqual(outside, [], f"rank {rank}: ops of iteration {n} outside step {n}")
        # The ET holds the window's iterations, each whole: every node below
        # an iteration is one of its ops, in its step.
        by_rf = cap.by_rf_id()
        et_iterations = {int(n["name"].split()[1]): n for n in cap.et["nodes"] if n["name"].startswith("iteration ")}
        self.assertEqual(sorted(et_iterations), steps, f"rank {rank}: iterations in the ET")
        children = {}
        for node in cap.et["nodes"]:
            children.setdefault(node["ctrl_deps"], []).append(node)
        for n, node in et_iterations.items():
            todo, seen = [node["id"]], 0
            while todo:
                for child in children.get(todo.pop(), []):
                    if child["id"] == child["ctrl_deps"]:
                        continue
                    todo.append(child["id"])
                    ev = by_rf.get(cap.attr(child, "rf_id"))
                    if ev is not None:
                        seen += 1
                        self.assertEqual(cap.step_of(ev), n, f"rank {rank}: ET node {child['name']} of iteration {n}")
            self.assertGreater(seen, 10)
        return cap

    def assert_tools_accept(self):
        self.assert_check_passes()
        for sub in ("report", "link", "convert"):
            r = subprocess.run([CLI, sub, self.trace_dir], capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, f"{sub}:\n{r.stdout}{r.stderr}")
            if sub == "convert":
                self.assertNotIn("written for the default group", r.stdout + r.stderr)
        # Every captured step of every rank has its forward, backward and
        # optimizer phases; the engine step (ZeRO's work after the inner
        # AdamW steps included) is at least the inner steps' time.
        r = subprocess.run([CLI, "report", "--json", self.trace_dir], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        for rank_doc in json.loads(r.stdout)["groups"][0]["ranks"]:
            cap = Capture(self.trace_dir, rank=rank_doc["rank"])
            inner = {}
            for e in cap.named("Optimizer.step#AdamW.step"):
                inner[cap.step_of(e)] = inner.get(cap.step_of(e), 0) + e["dur"] * 1000
            for step in rank_doc["steps"]:
                phases = step["phases"]
                for phase in ("forward_ns", "backward_ns", "optimizer_ns"):
                    self.assertGreater(phases[phase], 0, (rank_doc["rank"], step["step"], phase))
                self.assertGreaterEqual(phases["optimizer_ns"] + phases["communication_ns"],
                                        inner.get(step["step"], 0) * 0.99, (rank_doc["rank"], step["step"]))

    def run_case(self, zero, groups, gas=1):
        self.capture(zero, groups, gas)
        for rank in (0, 1):
            self.assert_each_step_holds_its_iteration(rank)
        self.assert_tools_accept()

    def test_zero1_one_group(self):
        self.run_case(1, 1)

    def test_zero1_two_groups(self):
        self.run_case(1, 2)

    def test_zero2_one_group(self):
        self.run_case(2, 1)

    def test_zero2_two_groups(self):
        self.run_case(2, 2)

    def test_zero3_one_group(self):
        self.run_case(3, 1)

    def test_zero3_two_groups(self):
        self.run_case(3, 2)

    def test_zero2_two_groups_gradient_accumulation(self):
        self.run_case(2, 2, gas=2)

    def test_pipeline_zero1_two_groups(self):
        # DeepSpeed's pipeline engine: train_batch() steps the model through
        # _take_model_step, never engine.step().
        self.run_case(1, 0)


if __name__ == "__main__":
    unittest.main()
