#!/usr/bin/env python3
"""Trigger latency: from `chakrashim trigger` to the first captured step
(issue #18: at most 2 s plus K steps), on a running on-demand job.

Starts tests/e2e/jobs/paced_loop.py (a fixed time a step) under the shim with
CHAKRA_ON_DEMAND=1, waits for its published step, then, TRIGGERS times, runs
`chakrashim trigger DIR --steps 2 --in K` and measures, by the wall clock,
from just before the command to the start of the window's first step
(ProfilerStep#S in the device trace: baseTimeNanoseconds + ts). The bound for
each is 2 s + K step times. Its cost while waiting, side by side with a plain
run, is bench_spans.py's "on demand, waiting" line.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

from bench_common import plain_env

HERE = os.path.dirname(os.path.abspath(__file__))
JOB = os.path.join(HERE, "..", "..", "tests", "e2e", "jobs", "paced_loop.py")


def wait_for(path, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if os.path.exists(path):
            return True
        time.sleep(0.02)
    return False


def first_step_start_s(device_file, step):
    with open(device_file) as f:
        trace = json.load(f)
    base_ns = trace.get("baseTimeNanoseconds", 0)
    for e in trace["traceEvents"]:
        if e.get("name") == f"ProfilerStep#{step}":
            return (base_ns + e["ts"] * 1000) / 1e9
    raise SystemExit(f"bench_trigger: no ProfilerStep#{step} in {device_file}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preload", required=True)
    ap.add_argument("--cli", required=True)
    ap.add_argument("--quick", action="store_true", help="one trigger: proves the script works")
    ap.add_argument("--triggers", type=int, default=5)
    ap.add_argument("--step-ms", type=float, default=20.0)
    ap.add_argument("--in-steps", type=int, default=150,
                    help="K of --in K: at least 2 s of steps, or ranks may be past it when they look")
    args = ap.parse_args()
    triggers = 1 if args.quick else args.triggers
    step_s = args.step_ms / 1000.0
    bound = 2.0 + args.in_steps * step_s
    with tempfile.TemporaryDirectory() as tmp:
        traces = os.path.join(tmp, "traces")
        stop = os.path.join(tmp, "stop")
        env = plain_env()
        env.update(LD_PRELOAD=args.preload, CHAKRA_PROFILE="1", CHAKRA_TRACE_DIR=traces,
                   CHAKRA_ON_DEMAND="1", CHAKRA_LOG_LEVEL="warn")
        job = subprocess.Popen([sys.executable, JOB, "1000000", "--step-ms", str(args.step_ms),
                                "--stop-file", stop], env=env, stdout=subprocess.DEVNULL)
        control = os.path.join(traces, ".chakrashim", "0")
        latencies = []
        try:
            if not wait_for(os.path.join(control, "step.json"), 120):
                raise SystemExit("bench_trigger: the job never published its step")
            for _ in range(triggers):
                before = set(os.listdir(control))
                t0 = time.time()
                r = subprocess.run([args.cli, "trigger", traces, "--steps", "2", "--in",
                                    str(args.in_steps)], capture_output=True, text=True)
                if r.returncode != 0:
                    raise SystemExit(f"bench_trigger: chakrashim trigger failed: {r.stdout}{r.stderr}")
                name = next(n for n in sorted(set(os.listdir(control)) - before)
                            if n.startswith("trigger-"))
                with open(os.path.join(control, name)) as f:
                    first = json.load(f)["first_step"]
                device = os.path.join(traces, f"step-{first}", "0_kineto", "rank-0.json")
                if not wait_for(device, 60):
                    raise SystemExit(f"bench_trigger: no window at step {first}")
                latencies.append(first_step_start_s(device, first) - t0)
        finally:
            open(stop, "w").close()
            job.wait(timeout=120)
    worst = max(latencies)
    print(f"trigger latency on tests/e2e/jobs/paced_loop.py ({args.step_ms:.0f} ms a step), "
          f"--in {args.in_steps}, {triggers} trigger(s){' [quick mode: not a measurement]' if args.quick else ''}")
    print(f"  from `chakrashim trigger` to the first captured step: median "
          f"{statistics.median(latencies):.2f} s, worst {worst:.2f} s "
          f"(bound 2 s + {args.in_steps} steps = {bound:.2f} s: "
          f"{'met' if worst <= bound else 'NOT met'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
