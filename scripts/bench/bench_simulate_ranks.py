#!/usr/bin/env python3
"""Fidelity of `convert` + ASTRA-sim for distributed jobs (issue #50): a
job over gloo (DDP on --world ranks, a two-stage pipeline, GPipe or 1F1B,
tensor parallel on 2 ranks, or a 2x2 data x tensor mesh on 4),
simulated, against the same steps' time in runs without the shim.

    bench_simulate_ranks.py --preload LIB [--cli PATH] [--astra BIN] [--job ddp|gpipe|1f1b|tp|dptp]
                            [--world N] [--window S E] [--steps N] [--rounds N] [--default-network]

Each round runs the job without the shim and times each rank's steps S..E
from its printed step lines (the time from the line of step S-1 to that of
step E, read as the lines arrive); then the job is captured (steps S..E)
once, converted (the default: gaps kept, the recording cost the capture
measured taken out, the fitted network PREFIX.network.yml) and simulated on
2 NPUs with that network (--default-network: tests/support/astra_sim.py's
50 GB/s, 500 ns ring instead). Prints per rank: the plain window (median
of the rounds), the capture's own window (its ProfilerStep#N spans), the
simulated time and their ratios. Never fails on a figure (not a timed
test); the issue's target is within 10% of the plain window.
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from bench_common import HERE, plain_env
import astra_sim  # tests/support, on the path by bench_common
import chakra_test as ct  # noqa: E402

JOBS = os.path.join(HERE, "..", "..", "tests", "e2e", "jobs")
STEP = re.compile(r"rank (\d+) step (\d+)")


def job_command(kind, steps):
    if kind == "ddp":
        return [sys.executable, os.path.join(JOBS, "ddp_gloo.py"), str(steps)]
    if kind in ("tp", "dptp"):
        return [sys.executable, os.path.join(JOBS, "tp_gloo.py"), str(steps)] + (["--dp"] if kind == "dptp" else [])
    return [sys.executable, os.path.join(JOBS, "pipeline_gloo.py"), str(steps), kind, "4"]


def plain_windows(cmd, start, end, world):
    """One run without the shim: {rank: seconds from step start-1's line to step end's}."""
    env = {**plain_env(), "OMP_NUM_THREADS": "1"}
    procs = ct.start_ranks(cmd, env, world_size=world, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    marks = {}
    import selectors
    sel = selectors.DefaultSelector()
    for p in procs:
        sel.register(p.stdout, selectors.EVENT_READ)
    open_streams = len(procs)
    while open_streams:
        for key, _ in sel.select():
            line = key.fileobj.readline()
            if not line:
                sel.unregister(key.fileobj)
                open_streams -= 1
                continue
            m = STEP.match(line)
            if m:
                marks[(int(m.group(1)), int(m.group(2)))] = time.monotonic()
    for p in procs:
        p.wait()
    return {r: marks[(r, end)] - marks[(r, start - 1)] for r in range(len(procs))
            if (r, end) in marks and (r, start - 1) in marks}


def captured_windows(root, world):
    out = {}
    for rank in range(world):
        path = os.path.join(root, "0_kineto", "rank-%d.json" % rank)
        with open(path) as f:
            trace = json.load(f)
        spans = [e["dur"] for e in trace["traceEvents"]
                 if e.get("ph") == "X" and re.match(r"ProfilerStep#\d+$", e.get("name", ""))]
        out[rank] = sum(spans) / 1e6
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--preload", required=True)
    p.add_argument("--cli", default=os.path.join(HERE, "..", "..", "build", "tools", "chakrashim"))
    p.add_argument("--astra", default=os.environ.get("ASTRA_SIM_BIN", ""))
    p.add_argument("--job", choices=["ddp", "gpipe", "1f1b", "tp", "dptp"], default="ddp")
    p.add_argument("--world", type=int, default=0, help="ranks (default 2; dptp 4; only ddp takes others)")
    p.add_argument("--window", nargs=2, type=int, default=[3, 6], metavar=("S", "E"))
    p.add_argument("--steps", type=int, default=9)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--default-network", action="store_true")
    a = p.parse_args()
    start, end = a.window
    world = a.world or (4 if a.job == "dptp" else 2)
    cmd = job_command(a.job, a.steps)
    plain = {r: [] for r in range(world)}
    for _ in range(a.rounds):
        for r, s in plain_windows(cmd, start, end, world).items():
            plain[r].append(s)
    tmp = tempfile.mkdtemp(prefix="bench-sim-ranks-")
    root = os.path.join(tmp, "traces")
    env = {**plain_env(), "OMP_NUM_THREADS": "1", "LD_PRELOAD": a.preload, "CHAKRA_PROFILE": "1",
           "CHAKRA_TRACE_DIR": root, "CHAKRA_START_STEP": str(start), "CHAKRA_END_STEP": str(end)}
    codes, outputs = ct.run_ranks_retrying_gloo(cmd, env, root, world_size=world)
    if codes != [0] * world:
        sys.exit("the capture failed:\n" + "\n".join(outputs))
    conv = subprocess.run([a.cli, "convert", root], capture_output=True, text=True)
    print(conv.stdout.strip())
    captured = captured_windows(root, world)
    simulated, how = {}, "no ASTRA-sim (--astra or ASTRA_SIM_BIN)"
    if a.astra:
        folder = os.path.join(tmp, "astra")
        configs = astra_sim.write_configs(os.path.join(folder, "configs"), world)
        fitted = os.path.join(root, "0_et", "rank.network.yml")
        if os.path.exists(fitted) and not a.default_network:
            shutil.copy(fitted, configs["network"])
            how = "the fitted network"
        else:
            how = "the default network (50 GB/s, 500 ns)"
        groups = os.path.join(root, "0_et", "rank.comm_groups.json")
        r = subprocess.run(astra_sim.command(a.astra, os.path.join(root, "0_et", "rank"), configs,
                                             groups if os.path.exists(groups) else None), cwd=folder,
                           capture_output=True, text=True, timeout=600)
        simulated = {int(m.group(1)): int(m.group(2)) / 1e9 for m in astra_sim.FINISHED.finditer(r.stdout + r.stderr)}
    print("bench_simulate_ranks: %s, steps %d..%d, %d plain round(s), ASTRA-sim with %s"
          % (a.job, start, end, a.rounds, how))
    print("rank   plain ms (runs)                  captured ms   simulated ms   sim/plain   sim/captured")
    for rank in range(world):
        med = statistics.median(plain[rank]) if plain[rank] else float("nan")
        runs = ", ".join("%.1f" % (x * 1e3) for x in plain[rank])
        sim = simulated.get(rank)
        print("%-6d %8.1f (%-22s) %11.1f %14s %11s %14s" % (
            rank, med * 1e3, runs, captured[rank] * 1e3, "%.1f" % (sim * 1e3) if sim else "-",
            "%.3f" % (sim / med) if sim else "-", "%.3f" % (sim / captured[rank]) if sim else "-"))
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
