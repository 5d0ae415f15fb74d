#!/usr/bin/env python3
"""What recording the Execution Trace costs on the training thread: torch's
ExecutionTraceObserver against chakrashim's own recorder (CHAKRA_ET_RECORDER,
docs/et-recorder.md), side by side on the same steps.

Runs bench_jobs/mlp_loop.py (about a hundred ops a step) in interleaved
rounds:
  plain      no shim
  spans      chakrashim, CHAKRA_HOST_TRACE=0: op spans only
  torch-et   spans + torch's ExecutionTraceObserver
  native-et  spans + chakrashim's recorder
and prints the median step time inside the window (of the least disturbed
round), each ET's added cost per
op over spans alone, and the ops' own durations in the device trace
(medians by name) with each ET against spans alone. Targets (issue #16):
the native ET's added cost per op at most 1/4 of torch's, the in-window step
with spans + native ET at most 1.5x plain, and op durations within 20% + 1 us
of the same ops with the ET off.
"""
import glob
import json
import os
import statistics
import subprocess
import sys
import tempfile

from bench_common import interleaved, job_parser, plain_env
from bench_spans import ops_per_step  # the same op count, from the spans run's trace

HERE = os.path.dirname(os.path.abspath(__file__))
JOB = os.path.join(HERE, "bench_jobs", "mlp_loop.py")
KINDS = ["plain", "spans", "torch-et", "native-et"]


def run(kind, args, tmp, i):
    out = os.path.join(tmp, f"{kind}-{i}.txt")
    env = plain_env()
    cmd = [sys.executable, JOB, "--steps", str(args.steps), "--out", out]
    if kind != "plain":
        env.update(LD_PRELOAD=args.preload, CHAKRA_PROFILE="1",
                   CHAKRA_TRACE_DIR=os.path.join(tmp, f"traces-{kind}-{i}"),
                   CHAKRA_HOST_TRACE="0" if kind == "spans" else "1",
                   CHAKRA_ET_RECORDER="native" if kind == "native-et" else "torch",
                   CHAKRA_LOG_LEVEL="warn", CHAKRA_START_STEP=str(args.start),
                   CHAKRA_END_STEP=str(args.end))
    subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, check=True)
    with open(out) as f:
        return [float(t) for t in f.read().split()]


def op_durations(tmp, kind):
    """(median duration in us by op name over every run of `kind`, the names
    of ops that never enclose another op)."""
    by_name, parents = {}, set()
    for path in glob.glob(os.path.join(tmp, f"traces-{kind}-*", "*_kineto", "rank-0.json")):
        with open(path) as f:
            spans = [e for e in json.load(f)["traceEvents"]
                     if e.get("ph") == "X" and e.get("cat") in ("cpu_op", "user_annotation")]
        for e in spans:
            if e["cat"] == "cpu_op":
                by_name.setdefault(e["name"], []).append(e["dur"])
        # On one thread, sorted by start: a span encloses the next if that
        # starts before it ends.
        spans.sort(key=lambda e: (e["tid"], e["ts"], -e["dur"]))
        for a, b in zip(spans, spans[1:]):
            if a["tid"] == b["tid"] and b["ts"] < a["ts"] + a["dur"]:
                parents.add(a["name"])
    return {k: statistics.median(v) for k, v in by_name.items()}, set(by_name) - parents


def main():
    args = job_parser(__doc__, rounds=5).parse_args()
    rounds = 1 if args.quick else args.rounds
    args.steps, args.start, args.end = (30, 10, 20) if args.quick else (300, 100, 200)
    with tempfile.TemporaryDirectory() as tmp:
        res = interleaved(KINDS, rounds, lambda k, i: run(k, args, tmp, i))
        ops = ops_per_step(tmp, args)
        durations = {k: op_durations(tmp, k) for k in KINDS[1:]}
    inside = range(args.start + 1, args.end)

    def med(kind):
        # Each round's median step, then the least disturbed round: on a
        # shared machine the other jobs' load comes and goes between rounds.
        return min(statistics.median(r[s] for s in inside) for r in res[kind])

    plain, spans, torch_et, native_et = (med(k) for k in KINDS)
    print(f"ET recorders on scripts/bench/bench_jobs/mlp_loop.py: {rounds} interleaved round(s), "
          f"window {args.start}-{args.end}, {ops:.0f} ops a step"
          f"{' [quick mode: not a measurement]' if args.quick else ''}")
    print(f"  step inside the window   plain                    {plain * 1e6:8.1f} us")
    for name, t in (("spans only", spans), ("spans + torch's ET", torch_et),
                    ("spans + native ET", native_et)):
        print(f"                           {name:24s} {t * 1e6:8.1f} us  ratio {t / plain:.3f}")
    torch_cost = (torch_et - spans) / ops
    native_cost = (native_et - spans) / ops
    print(f"  ET's added cost per op   torch {torch_cost * 1e6:.2f} us   native {native_cost * 1e6:.2f} us"
          f"   native/torch {native_cost / torch_cost:.3f} (target <= 0.25)")
    print(f"  spans + native ET step / plain step: {native_et / plain:.3f} (target <= 1.5)")
    base, leaves = durations["spans"]
    torch_d, native_d = durations["torch-et"][0], durations["native-et"][0]
    print("  op durations in the device trace, median us (ET off | torch's ET | native ET);")
    print("  ops that enclose others include their children's recording:")
    for group, names in (("leaf ops", sorted(leaves, key=lambda n: -base[n])),
                         ("enclosing ops", sorted(set(base) - leaves, key=lambda n: -base[n]))):
        worst = None
        for n in names:
            if n in native_d:
                over = abs(native_d[n] - base[n]) - (0.2 * base[n] + 1.0)
                worst = over if worst is None else max(worst, over)
        for n in names[:6]:
            print(f"    {group[:-1]:13s} {n[:40]:40s} {base[n]:7.1f} | {torch_d.get(n, float('nan')):7.1f} | "
                  f"{native_d.get(n, float('nan')):7.1f}")
        if worst is not None:
            print(f"    every one of the {len(names)} {group}' native-ET median within 20% + 1 us of ET off: "
                  f"{'yes' if worst <= 0 else f'no (worst by {worst:.1f} us)'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
