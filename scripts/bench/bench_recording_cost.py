#!/usr/bin/env python3
"""How stable the recording cost a capture measures is (issue #50, item 5):
the same jobs captured several times, each capture's recording_cost read
back, printed per job with its spread, beside the figure main took before
the steps' figure could be refused (the larger of the two, always).

    bench_recording_cost.py --preload LIB [--runs N] [--jobs example,mlp,ddp]

Jobs: examples/train_tiny.py (steps 8-12), tests/e2e/jobs/plain_loop.py (a
small MLP, steps 6-9 of 12) and a 2-rank DDP job over gloo
(tests/e2e/jobs/ddp_gloo.py, steps 3-6 of 9, both ranks). Per job: each
run's gaps' figure, steps' figure, what is taken out and why, then the
spread of what is taken out (max / min) and of what the old rule took, and
the same relative to the run's own speed (ns an op per ms of the window's
mean step): on this 2-core machine the whole job ran 1.4 times slower in
some runs than in others (20 against 28 ms steps of the example), and its
recording cost with it, so the raw spread is the machine's. The issue's
target: the same job within +-25% across runs. Never fails on a figure
(not a timed test).
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

from bench_common import HERE, plain_env
import chakra_test as ct  # noqa: E402

ROOT = os.path.join(HERE, "..", "..")
JOBS = {
    "example": ([sys.executable, os.path.join(ROOT, "examples", "train_tiny.py"), "--steps", "14"], 8, 12, 1),
    "mlp": ([sys.executable, os.path.join(ROOT, "tests", "e2e", "jobs", "plain_loop.py"), "12"], 6, 9, 1),
    "ddp": ([sys.executable, os.path.join(ROOT, "tests", "e2e", "jobs", "ddp_gloo.py"), "9"], 3, 6, 2),
}


def costs(root, ranks):
    """Each rank's (recording_cost, mean ProfilerStep#N ms)."""
    out = []
    for rank in range(ranks):
        with open(os.path.join(root, "0_kineto", "rank-%d.json" % rank)) as f:
            trace = json.load(f)
        steps = [float(e["dur"]) / 1e3 for e in trace["traceEvents"]
                 if e.get("ph") == "X" and re.match(r"ProfilerStep#\d+$", e.get("name", ""))]
        out.append((trace["chakrashim"]["recording_cost"], sum(steps) / len(steps) if steps else 0))
    return out


def capture(preload, cmd, start, end, ranks, root):
    env = {**plain_env(), "OMP_NUM_THREADS": "1", "LD_PRELOAD": preload, "CHAKRA_PROFILE": "1",
           "CHAKRA_TRACE_DIR": root, "CHAKRA_START_STEP": str(start), "CHAKRA_END_STEP": str(end)}
    if ranks == 1:
        r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
        if r.returncode != 0:
            sys.exit("the capture failed:\n" + r.stderr[-2000:])
    else:
        codes, outputs = ct.run_ranks_retrying_gloo(cmd, env, root)
        if any(codes):
            sys.exit("the capture failed:\n" + "\n".join(outputs)[-2000:])
    return costs(root, ranks)


def spread(values):
    values = [v for v in values if v]
    return "%.2f" % (max(values) / min(values)) if values else "-"


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--preload", required=True)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--jobs", default="example,mlp,ddp")
    a = p.parse_args()
    tmp = tempfile.mkdtemp(prefix="bench-cost-")
    print("bench_recording_cost: %d runs a job; figures in ns an op" % a.runs)
    print("%-8s %-4s %-5s %8s %9s %9s %9s %6s %8s  %s" % ("job", "run", "rank", "step ms", "gaps", "steps", "taken",
                                                         "old", "taken/ms", "why"))
    try:
        for name in a.jobs.split(","):
            cmd, start, end, ranks = JOBS[name]
            taken, old, relative, old_relative = [], [], [], []
            for run in range(a.runs):
                root = os.path.join(tmp, "%s-%d" % (name, run))
                for rank, (c, step_ms) in enumerate(capture(a.preload, cmd, start, end, ranks, root)):
                    before = max(c["gap_ns"] or 0, c["step_ns"] or 0)
                    taken.append(c["per_op_ns"])
                    old.append(before)
                    relative.append(c["per_op_ns"] / step_ms if step_ms else 0)
                    old_relative.append(before / step_ms if step_ms else 0)
                    print("%-8s %-4d %-5d %8.2f %9s %9s %9d %6d %8.0f  %s" % (
                        name, run, rank, step_ms, c["gap_ns"], c["step_ns"], c["per_op_ns"], before, relative[-1],
                        c["from"] + ("; " + c["step_refused"] if c.get("step_refused") else "")))
                shutil.rmtree(root, ignore_errors=True)
            print("%-8s spread (max/min) of what is taken out: %s (main before: %s); per ms of step: %s "
                  "(main before: %s)" % (name, spread(taken), spread(old), spread(relative), spread(old_relative)))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("target (issue #50): the same job within +-25% across runs (a spread up to 1.67)")


if __name__ == "__main__":
    main()
