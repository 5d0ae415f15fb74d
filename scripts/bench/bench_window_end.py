#!/usr/bin/env python3
"""What a window's boundaries cost the training thread of a multi-rank job,
side by side with the same job without chakrashim (issue #34).

A 2-rank gloo DDP job of about 1 ms a step (scripts/bench/bench_jobs/ddp_steps.py)
runs with windows of 10 steps repeating every 30 (CHAKRA_START_STEP=10,
CHAKRA_END_STEP=19, CHAKRA_REPEAT_EVERY=30), and without the shim. Printed,
per run kind, over every window of every rank of every round:
  1. the median step outside any window;
  2. the window's closing step (END) and the two after it (END+1, END+2,
     while the files are written), each as its worst and median; target:
     each at most the median step + 2 ms, in every run (each run's worst
     is printed, with where it was);
  3. the window's first step (START), which arming used to inflate;
  4. from the device traces: the time from the start of each captured
     step's ProfilerStep span to its first op, the first step of the window
     against the others.
Step times are the job's own (the end of one optimizer step to the end of
the next, as chakrashim counts steps). A benchmark, never a pass/fail
timing: --quick runs one short round to prove the script works.
"""
import glob
import json
import os
import statistics
import subprocess
import sys
import tempfile

from bench_common import interleaved, job_parser, plain_env
from chakra_test import start_ranks  # tests/support, on the path by bench_common

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
JOB = os.path.join(ROOT, "scripts", "bench", "bench_jobs", "ddp_steps.py")
START, END, EVERY = 10, 19, 30


def run(kind, args, tmp, i):
    """One 2-rank job; returns ({rank: [step seconds]}, trace folder)."""
    traces = os.path.join(tmp, f"traces-{kind}-{i}")
    env = plain_env()
    env.update(OMP_NUM_THREADS="1")
    if kind == "chakrashim":
        env.update(LD_PRELOAD=args.preload, CHAKRA_PROFILE="1", CHAKRA_TRACE_DIR=traces,
                   CHAKRA_START_STEP=str(START), CHAKRA_END_STEP=str(END), CHAKRA_REPEAT_EVERY=str(EVERY))

    def times_file(rank):
        return os.path.join(tmp, f"{kind}-{i}-rank{rank}.txt")

    for attempt in range(3):
        procs = start_ranks(lambda rank: [sys.executable, JOB, str(args.steps), times_file(rank)], env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        results, failed = {}, []
        for rank, p in enumerate(procs):
            _, err = p.communicate(timeout=600)
            if p.returncode != 0:
                failed.append(err)
                continue
            with open(times_file(rank)) as f:
                results[rank] = [float(x) for x in f.read().split()]
        if not failed:
            return results, traces
        # gloo's loopback connection setup fails now and then on a loaded
        # 2-core machine, with or without chakrashim: that run is retried.
        if not any("connectFullMesh" in e for e in failed):
            raise SystemExit(f"bench_window_end: the {kind} job failed:\n" + "\n".join(failed))
    raise SystemExit(f"bench_window_end: the {kind} job failed 3 times (gloo connection setup)")


def windows(steps):
    w, out = START, []
    while w + (END - START) < steps - 3:
        out.append(w)
        w += EVERY
    return out


def lead_ins(traces):
    """(first step's, other steps') ProfilerStep start to first op, in ms."""
    first, others = [], []
    for path in glob.glob(os.path.join(traces, "step-*", "*_kineto", "rank-*.json*")):
        if not path.endswith(".json"):
            continue
        with open(path) as f:
            events = json.load(f).get("traceEvents", [])
        steps = sorted((e for e in events if e.get("name", "").startswith("ProfilerStep#")),
                       key=lambda e: e["ts"])
        ops = sorted(e["ts"] for e in events if e.get("cat") == "cpu_op")
        for n, s in enumerate(steps):
            inside = [t for t in ops if s["ts"] <= t <= s["ts"] + s["dur"]]
            if inside:
                (first if n == 0 else others).append((inside[0] - s["ts"]) / 1e3)
    return first, others


def fmt(values):
    if not values:
        return "        -"
    return f"{statistics.median(values):7.3f} ms (worst {max(values):.3f})"


def main():
    args = job_parser(__doc__, rounds=3).parse_args()
    rounds = 1 if args.quick else args.rounds
    args.steps = 36 if args.quick else 220
    kinds = ["plain", "chakrashim"]
    with tempfile.TemporaryDirectory() as tmp:
        results = interleaved(kinds, rounds, lambda k, i: run(k, args, tmp, i))
        starts = windows(args.steps)
        in_window = {s for w in starts for s in range(w, w + END - START + 3)}
        print(f"window boundaries on a 2-rank gloo DDP job ({os.path.basename(JOB)}): "
              f"{rounds} interleaved round(s) of {args.steps} steps, windows of steps "
              f"{START}-{END} every {EVERY} ({len(starts)} a run)"
              f"{' [quick mode: not a measurement]' if args.quick else ''}")
        print(f"{'':34}{'plain':>30}{'chakrashim':>34}")
        rows = {}
        for k in kinds:
            med = statistics.median(t for res, _ in results[k] for times in res.values()
                                    for s, t in enumerate(times)
                                    if s >= 5 and s not in in_window)
            rows.setdefault("median step outside windows", []).append([med])
            for label, offset in (("window's first step (START)", 0),
                                  ("closing step (END)", END - START),
                                  ("END+1", END - START + 1), ("END+2", END - START + 2)):
                rows.setdefault(label, []).append(
                    [times[w + offset] for res, _ in results[k] for times in res.values()
                     for w in starts])
        for label, (plain, ours) in rows.items():
            print(f"  {label:32}{fmt([t * 1e3 for t in plain]):>30}{fmt([t * 1e3 for t in ours]):>34}")
        median_ours = rows["median step outside windows"][1][0]
        ends = ("closing step (END)", "END+1", "END+2")
        medians = [statistics.median(rows[label][1]) for label in ends]
        worst = max(max(rows[label][1]) for label in ends)
        target = median_ours + 0.002
        print(f"  END, END+1, END+2 with chakrashim, medians: "
              f"{', '.join(f'{m * 1e3:.3f}' for m in medians)} ms; target <= median step + 2 ms = "
              f"{target * 1e3:.3f} ms: {'met' if max(medians) <= target else 'NOT met'} "
              f"(worst single step {worst * 1e3:.3f} ms: compare the plain job's worst above)")
        # Issue #52's verdict is per run, and on a run's worst: in every run,
        # each of END, END+1 and END+2 of every window, on every rank, at most
        # that run's median step + 2 ms.
        print("  every run's worst of END, END+1, END+2 over its windows and ranks, against its median step + 2 ms:")
        offsets = (END - START, END - START + 1, END - START + 2)
        met = {}
        for k in kinds:
            met[k] = 0
            for i, (res, _) in enumerate(results[k]):
                run_med = statistics.median(t for times in res.values() for s, t in enumerate(times)
                                            if s >= 5 and s not in in_window)
                worst, where = 0.0, ""
                for rank, times in sorted(res.items()):
                    for w in starts:
                        for off, label in zip(offsets, ("END", "END+1", "END+2")):
                            if times[w + off] > worst:
                                worst, where = times[w + off], f"{label} of steps {w}-{w + END - START}, rank {rank}"
                ok = worst <= run_med + 0.002
                met[k] += ok
                print(f"    {k:11} run {i + 1}: worst {worst * 1e3:7.3f} ms ({where}), median step "
                      f"{run_med * 1e3:.3f} ms: {'within' if ok else 'OVER'} + 2 ms")
        print(f"  runs within: chakrashim {met['chakrashim']} of {rounds}, plain {met['plain']} of {rounds} "
              f"(target: every chakrashim run; the plain job's own runs say what the machine does)")
        first, others = [], []
        for _, traces in results["chakrashim"]:
            f, o = lead_ins(traces)
            first += f
            others += o
        print("  device trace, ProfilerStep start to its first op:")
        print(f"    the window's first step       {fmt(first)}")
        print(f"    its other steps               {fmt(others)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
