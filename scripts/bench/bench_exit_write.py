#!/usr/bin/env python3
"""How long a job waits at exit for a window chakrashim writes then, with
and without two busy CPU hogs beside it, side by side with the same job
without chakrashim (issue #48, item 6).

The job (tests/e2e/jobs/many_ops.py) runs steps of many small ops; the
window opens at step 1 and is still open when training ends, so both files
are written at exit. Two sizes: about 22,000 and 170,000 ops in the window.
The hogs are two processes spinning on the CPU at the job's priority (on a
2-core machine: a load of about 3 with the job). Printed per size and load:
the time from the job's last line ("training done") to its exit, median and
worst over the rounds, for the job without chakrashim (the interpreter's own
teardown) and with it (that teardown plus the write), and whether the files
were final. A benchmark, never a pass/fail timing: --quick runs one round
of the smaller window only, to prove the script works.
"""
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from bench_common import interleaved, job_parser, plain_env

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
JOB = os.path.join(ROOT, "tests", "e2e", "jobs", "many_ops.py")
# Adds per step for each size: an add is five ops (the scalar becomes a
# tensor first), and the window holds steps 1 and 2 plus step 3, cut by the
# job's end (4 steps in all).
SIZES = {"22k ops": 1450, "170k ops": 11300}


def exit_wait(cmd, env):
    """Seconds from the job's "training done" line to its exit, its exit
    status and its stderr."""
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    done = None
    for line in proc.stdout:
        if line.startswith("training done"):
            done = time.monotonic()
    err = proc.stderr.read()
    rc = proc.wait()
    return time.monotonic() - (done or time.monotonic()), rc, err


def main():
    ap = job_parser(__doc__, rounds=3)
    args = ap.parse_args()
    rounds = 1 if args.quick else args.rounds
    sizes = dict(list(SIZES.items())[:1]) if args.quick else SIZES
    tmp = tempfile.mkdtemp(prefix="chakra-bench-exit-")
    print("exit wait: from the job's last line to its exit, median (worst) over %d round%s" %
          (rounds, "" if rounds == 1 else "s"))
    print("  %-9s %-10s %18s %18s  %s" % ("window", "load", "without chakrashim", "with chakrashim", "files"))
    try:
        for size, adds in sizes.items():
            for load in ("quiet", "2 hogs"):
                hogs = []
                if load == "2 hogs":
                    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
                try:
                    def run(kind, i):
                        env = plain_env()
                        env.update(OMP_NUM_THREADS="1")
                        traces = os.path.join(tmp, f"{size}-{load}-{kind}-{i}".replace(" ", "_"))
                        if kind == "chakrashim":
                            env.update(LD_PRELOAD=args.preload, CHAKRA_PROFILE="1", CHAKRA_TRACE_DIR=traces,
                                       CHAKRA_START_STEP="1", CHAKRA_END_STEP="100", CHAKRA_EXIT_TIMEOUT="120")
                        took, rc, err = exit_wait([sys.executable, JOB, "4", str(adds)], env)
                        partial = any(f.endswith(".partial") for _, _, fs in os.walk(traces) for f in fs)
                        shutil.rmtree(traces, ignore_errors=True)
                        return took, rc, partial
                    out = interleaved(["plain", "chakrashim"], rounds, run)
                finally:
                    for h in hogs:
                        h.kill()
                        h.wait()

                def cell(kind):
                    t = [r[0] for r in out[kind]]
                    return "%7.2f s (%5.2f)" % (statistics.median(t), max(t))
                files = "final" if not any(r[2] for r in out["chakrashim"]) else "LEFT .partial"
                codes = {r[1] for k in out for r in out[k]}
                print("  %-9s %-10s %18s %18s  %s%s" % (size, load, cell("plain"), cell("chakrashim"), files,
                                                         "" if codes == {0} else " exit %s" % sorted(codes)))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
