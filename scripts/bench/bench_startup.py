#!/usr/bin/env python3
"""What a process pays for inheriting LD_PRELOAD=libchakrashim.so.

Runs each program under three environments, interleaved run by run so that
drift in the machine hits all alike:
  plain     no preload
  inert     preload, CHAKRA_PROFILE unset
  target    preload, CHAKRA_PROFILE=1 with a valid configuration (the process
            is a target, but never imports torch, so it never arms)
(plus "empty": an empty C library preloaded, the least any preload costs)
and prints the median wall time of each (posix_spawn to wait4), the ratio to
plain, the ratio to the empty preload, the spread (interquartile range) and
the minor page faults of one run (from wait4's rusage: they do not move with
the machine's load, wall times on a busy machine do).
Targets: <= 1.05 of plain; for /bin/true as a target, <= 1.03 of the empty
preload.
"""
import argparse
import os
import statistics
import sys
import tempfile
import time

from bench_common import plain_env


def measure(cmd, env, runs_per_env, order):
    """Wall times and minor faults per environment, run by run interleaved.
    posix_spawn and wait4 directly: subprocess.run adds about half a
    millisecond of Python around a 1 ms program, which would hide what the
    preload costs."""
    times = {name: [] for name in order}
    faults = {name: [] for name in order}
    devnull = os.open(os.devnull, os.O_WRONLY)
    actions = [(os.POSIX_SPAWN_DUP2, devnull, 1), (os.POSIX_SPAWN_DUP2, devnull, 2)]
    envs = {name: env[name] for name in order}
    try:
        for _ in range(runs_per_env):
            for name in order:
                t0 = time.perf_counter()
                pid = os.posix_spawn(cmd[0], cmd, envs[name], file_actions=actions)
                _, status, usage = os.wait4(pid, 0)
                times[name].append(time.perf_counter() - t0)
                if os.waitstatus_to_exitcode(status) != 0:
                    raise RuntimeError(f"{cmd} failed under {name}")
                faults[name].append(usage.ru_minflt)
    finally:
        os.close(devnull)
    return times, faults


def quartiles(values):
    q = statistics.quantiles(values, n=4)
    return q[0], q[2]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preload", required=True)
    ap.add_argument("--empty-preload", help="an empty library, for a reference row")
    ap.add_argument("--quick", action="store_true", help="few runs: proves the script works")
    args = ap.parse_args()
    runs = 8 if args.quick else 1000
    scrub = plain_env()
    with tempfile.TemporaryDirectory() as d:
        env = {
            "plain": dict(scrub),
            "inert": dict(scrub, LD_PRELOAD=args.preload),
            "target": dict(scrub, LD_PRELOAD=args.preload, CHAKRA_PROFILE="1",
                           CHAKRA_TRACE_DIR=os.path.join(d, "t"), CHAKRA_START_STEP="5"),
        }
        programs = [("/bin/true", ["/bin/true"]),
                    ("python -c pass", [sys.executable, "-c", "pass"])]
        order = ["plain", "inert", "target"]
        if args.empty_preload:
            env["empty"] = dict(scrub, LD_PRELOAD=args.empty_preload)
            order.insert(1, "empty")
        print(f"startup cost of the preload: median over {runs} interleaved runs each "
              f"(ratio to plain; target <= 1.05){' [quick mode: not a measurement]' if args.quick else ''}")
        print(f"{'program':<16}{'env':<8}{'median ms':>10}{'IQR ms':>16}{'ratio':>8}"
              f"{'vs empty':>10}{'faults':>8}")
        for label, cmd in programs:
            times, faults = measure(cmd, env, runs if "python" not in label else max(4, runs // 4),
                                    order)
            base = statistics.median(times["plain"])
            empty = statistics.median(times["empty"]) if "empty" in times else None
            for name in order:
                med = statistics.median(times[name])
                lo, hi = quartiles(times[name])
                vs_empty = f"{med / empty:>10.3f}" if empty else f"{'':>10}"
                print(f"{label:<16}{name:<8}{med * 1e3:>10.3f}{lo * 1e3:>8.3f}-{hi * 1e3:<7.3f}"
                      f"{med / base:>8.3f}{vs_empty}{statistics.median(faults[name]):>8.0f}")
        if os.path.exists(os.path.join(d, "t")):
            print("bench: a trace folder was created by a process that never stepped", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
