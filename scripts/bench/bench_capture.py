#!/usr/bin/env python3
"""Training-step cost of chakrashim on the bundled example, side by side with
no shim and with NeMo ModelPT's in-script way (torch.profiler with an
ExecutionTraceObserver), in interleaved runs.

Prints, as medians over runs with the spread (min-max of the per-run
medians):
  1. step time without the shim vs with the shim loaded but outside its
     window (target ratio <= 1.01);
  2. step time inside the window: ours vs NeMo's way over the same steps;
  3. how long the training thread is blocked at window end: the end step's
     extra time over the window's other steps, for both (NeMo's end step
     holds stop() + export_chrome_trace, measured on its own too).
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile

from bench_common import plain_env

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLE = os.path.join(ROOT, "examples", "train_tiny.py")


def run(kind, args, preload, tmp, i):
    times = os.path.join(tmp, f"{kind}-{i}.txt")
    env = plain_env()
    cmd = [sys.executable, EXAMPLE, "--steps", str(args.steps), "--step-times", times]
    if kind in ("outside", "ours"):
        env.update(LD_PRELOAD=preload, CHAKRA_PROFILE="1",
                   CHAKRA_TRACE_DIR=os.path.join(tmp, f"traces-{kind}-{i}"))
        env["CHAKRA_START_STEP"] = str(10 ** 9 if kind == "outside" else args.start)
        env["CHAKRA_END_STEP"] = str(10 ** 9 if kind == "outside" else args.end)
    if kind == "nemo":
        cmd += ["--torch-profiler", str(args.start), str(args.end)]
    subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    with open(times) as f:
        steps = [float(x) for x in f.read().split()]
    blocked = None
    if os.path.exists(times + ".blocked"):
        with open(times + ".blocked") as f:
            blocked = float(f.read())
    return steps, blocked


def fmt(values, unit=1e3):
    med = statistics.median(values)
    return f"{med * unit:9.3f} ms  [{min(values) * unit:.3f}-{max(values) * unit:.3f}]"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preload", required=True)
    ap.add_argument("--quick", action="store_true", help="one short round: proves the script works")
    args = ap.parse_args()
    rounds = 1 if args.quick else 5
    args.steps, args.start, args.end = (9, 3, 5) if args.quick else (40, 12, 16)
    kinds = ["plain", "outside", "ours", "nemo"]
    results = {k: [] for k in kinds}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(rounds):
            for k in kinds:
                results[k].append(run(k, args, args.preload, tmp, i))
    window = range(args.start, args.end + 1)
    # Steps outside any window, past the first two (warm-up of the allocator
    # and of torch's dispatcher).
    outside = [s for s in range(2, args.steps) if s < args.start - 1 or s > args.end + 1]

    def per_run(kind, steps):
        return [statistics.median(r[0][s] for s in steps) for r in results[kind]]

    plain_out, shim_out = per_run("plain", outside), per_run("outside", outside)
    print(f"capture cost on examples/train_tiny.py: {rounds} interleaved round(s), "
          f"{args.steps} steps, window {args.start}-{args.end}"
          f"{' [quick mode: not a measurement]' if args.quick else ''}")
    print("1. step time outside the window (median of per-run medians [min-max])")
    print(f"   no shim                      {fmt(plain_out)}")
    print(f"   shim loaded, outside window  {fmt(shim_out)}   ratio "
          f"{statistics.median(shim_out) / statistics.median(plain_out):.3f} (target <= 1.01)")
    ours_in, nemo_in, plain_in = per_run("ours", window), per_run("nemo", window), per_run("plain", window)
    print("2. step time inside the window")
    print(f"   no shim                      {fmt(plain_in)}")
    print(f"   chakrashim                   {fmt(ours_in)}   ratio to no shim "
          f"{statistics.median(ours_in) / statistics.median(plain_in):.3f}")
    print(f"   NeMo way (torch.profiler+ET) {fmt(nemo_in)}   ratio to no shim "
          f"{statistics.median(nemo_in) / statistics.median(plain_in):.3f}")
    end = args.end

    def end_extra(kind):
        others = [s for s in window if s != end]
        return [r[0][end] - statistics.median(r[0][s] for s in others) for r in results[kind]]

    print("3. training thread blocked at window end (end step minus the window's other steps)")
    print(f"   chakrashim                   {fmt(end_extra('ours'))}")
    print(f"   NeMo way                     {fmt(end_extra('nemo'))}   "
          f"(of which prof.stop() + export: {fmt([r[1] for r in results['nemo']]).strip()})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
