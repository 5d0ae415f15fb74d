"""Runs unmodified jobs under the preload and reads what they captured.

Every capture is also run through `chakrashim check` when the command has
it, so each end-to-end test checks the trace contract too.
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "support"))
from chakra_test import (CLI, PRELOAD, PYTHON, SOURCE_DIR, clean_env, free_port, run,  # noqa: E402,F401
                         start_ranks, temp_dir, torchrun)

temp_dir_for = temp_dir

JOBS = os.path.join(os.path.dirname(__file__), "jobs")
EXAMPLES_DIR = os.path.join(os.path.dirname(__file__), "..", "..", "examples")
MARKER = "Optimizer.step#"


def job_env(trace_dir, **settings):
    env = dict(LD_PRELOAD=PRELOAD, CHAKRA_PROFILE=1, CHAKRA_TRACE_DIR=trace_dir)
    env.update(settings)
    return clean_env(**env)


def run_job(script, args=(), env=None, timeout=300):
    return run([PYTHON, os.path.join(JOBS, script), *map(str, args)], env, timeout=timeout)


def run_plain(script, args=(), timeout=300):
    return run([PYTHON, os.path.join(JOBS, script), *map(str, args)], clean_env(),
               timeout=timeout)


def capture_files(trace_dir, job="0", index=0, rank=0):
    suffix = f".{index}" if index else ""
    return (os.path.join(trace_dir, f"{job}_chakra{suffix}", f"rank-{rank}.json"),
            os.path.join(trace_dir, f"{job}_kineto{suffix}", f"rank-{rank}.json"))


RUN_MARKER = ".chakrashim-run"


def all_files(root, markers=False):
    """The files under root, as relative paths; without the run markers
    (common/files/run_marker.h) unless asked for."""
    out = []
    for d, _, files in os.walk(root):
        out += [os.path.relpath(os.path.join(d, f), root) for f in files if markers or f != RUN_MARKER]
    return sorted(out)


class Capture:
    """One rank's ET and device trace, with the questions tests ask."""

    def __init__(self, trace_dir, job="0", index=0, rank=0):
        self.et_path, self.dev_path = capture_files(trace_dir, job, index, rank)
        with open(self.et_path) as f:
            self.et = json.load(f)
        with open(self.dev_path) as f:
            self.dev = json.load(f)
        self.nodes = {n["id"]: n for n in self.et["nodes"]}
        self.events = self.dev["traceEvents"]
        self.meta = self.dev.get("chakrashim", {})

    @staticmethod
    def attr(node, name):
        return next((a["value"] for a in node["attrs"] if a["name"] == name), None)

    def op_nodes(self):
        return [n for n in self.et["nodes"] if not n["name"].startswith("[pytorch|profiler")]

    def outermost_markers(self):
        out = []
        for n in self.et["nodes"]:
            if not n["name"].startswith(MARKER):
                continue
            parent, nested = self.nodes.get(n["ctrl_deps"]), False
            while parent is not None and parent["id"] != parent["ctrl_deps"]:
                if parent["name"].startswith(MARKER):
                    nested = True
                    break
                parent = self.nodes.get(parent["ctrl_deps"])
            if not nested:
                out.append(n)
        return out

    def step_events(self):
        return sorted((e for e in self.events if e.get("name", "").startswith("ProfilerStep#")),
                      key=lambda e: e["ts"])

    def device_steps(self):
        return [int(e["name"].split("#")[1]) for e in self.step_events()]

    def step_of(self, event):
        """The N of the ProfilerStep#N that contains `event`, or None."""
        for s in self.step_events():
            if s["ts"] <= event["ts"] and event["ts"] + event["dur"] <= s["ts"] + s["dur"] + 1e-3:
                return int(s["name"].split("#")[1])
        return None

    def by_rf_id(self):
        return {e["args"]["Record function id"]: e for e in self.events
                if e.get("cat") in ("cpu_op", "user_annotation")
                and "Record function id" in e.get("args", {})}

    def et_steps(self):
        """Steps of the ET's outermost markers, through their device events."""
        rf = self.by_rf_id()
        return sorted(self.step_of(rf[self.attr(n, "rf_id")]) for n in self.outermost_markers())

    def rf_coverage(self):
        rf = self.by_rf_id()
        ops = self.op_nodes()
        return sum(1 for n in ops if self.attr(n, "rf_id") in rf) / max(1, len(ops))

    def named(self, prefix):
        return [e for e in self.events if e.get("name", "").startswith(prefix)]


def run_check(paths, *extra):
    """`chakrashim check` on a capture: the CompletedProcess."""
    return subprocess.run([CLI, "check", *extra, *paths], capture_output=True, text=True)
