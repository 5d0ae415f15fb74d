"""What the benchmarks share: their command lines, a job's environment
without chakrashim, one run of a command timed with its peak memory, runs of
several kinds interleaved round by round, and the figures' units. Never a
pass/fail timing. Also puts tests/support on the path (the trace generator,
chakra_test's ranks started by hand).

Peak RSS: Linux charges a process, at exec, with the peak of the memory it
had before (signal->maxrss), and a child of Python starts as a copy of this
interpreter, so os.wait4's ru_maxrss is at least Python's own size. GNU time
(/usr/bin/time), a small process, forks the command itself and reports its
ru_maxrss; it is used when present. Otherwise the wait4 figure is printed as
an upper bound.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "support"))

GNU_TIME = "/usr/bin/time"


def plain_env():
    """This process's environment without chakrashim's variables or a
    preload: a job's, to which each kind of run adds its own."""
    return {k: v for k, v in os.environ.items() if not k.startswith("CHAKRA_") and k != "LD_PRELOAD"}


def mib(n):
    return "%.1f MiB" % (n / 1048576.0)


def rss_method():
    """How run_once measures peak RSS, for the benchmark's heading."""
    return "GNU time" if os.access(GNU_TIME, os.X_OK) else "os.wait4, an upper bound"


def run_once(cmd):
    """(wall s, cpu s, peak RSS bytes, exit status) of one run of cmd, its
    output thrown away. CPU time is user + system: wall time on a shared
    machine counts other people's work."""
    fd, report = tempfile.mkstemp(prefix="chakra-bench-rss-")
    os.close(fd)
    try:
        gnu = os.access(GNU_TIME, os.X_OK)
        full = [GNU_TIME, "-q", "-o", report, "-f", "%M %U %S"] + cmd if gnu else cmd
        start = time.perf_counter()
        proc = subprocess.Popen(full, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        peak_kib, cpu = usage.ru_maxrss, usage.ru_utime + usage.ru_stime
        if gnu:
            with open(report) as f:
                fields = f.read().split()
            peak_kib, cpu = int(fields[-3]), float(fields[-2]) + float(fields[-1])
        return wall, cpu, peak_kib * 1024, os.waitstatus_to_exitcode(status)
    finally:
        os.remove(report)


def measure(cmd, runs, before=None):
    """run_once `runs` times (`before` called ahead of each): the median wall
    and CPU seconds, the largest peak RSS, and the exit statuses seen."""
    results = []
    for _ in range(runs):
        if before:
            before()
        results.append(run_once(cmd))
    return (statistics.median(r[0] for r in results), statistics.median(r[1] for r in results),
            max(r[2] for r in results), ",".join(sorted({str(r[3]) for r in results})))


def tool_parser(doc, quick_help):
    """The command line of a benchmark of `chakrashim`'s commands: --cli (by
    default CTest's, else the build folder's) and --quick."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--cli", default=os.environ.get("CHAKRASHIM_TEST_CLI") or
                    os.path.join(HERE, "..", "..", "build", "tools", "chakrashim"))
    ap.add_argument("--quick", action="store_true", help=quick_help)
    return ap


def cli_missing(name, cli):
    """True, said on stderr, when there is no chakrashim to time."""
    if os.access(cli, os.X_OK):
        return False
    print("%s: no chakrashim at %s; build first" % (name, cli), file=sys.stderr)
    return True


def job_parser(doc, rounds):
    """The command line of a benchmark of jobs under the preload: --preload,
    --quick (one short round) and --rounds (by default `rounds`)."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--preload", required=True)
    ap.add_argument("--quick", action="store_true", help="one short round: proves the script works")
    ap.add_argument("--rounds", type=int, default=rounds)
    return ap


def interleaved(kinds, rounds, run):
    """run(kind, round) for every kind in each round in turn, so that the load
    of a shared machine, which comes and goes, falls on every kind alike:
    {kind: [what run returned, round by round]}."""
    results = {k: [] for k in kinds}
    for i in range(rounds):
        for k in kinds:
            results[k].append(run(k, i))
    return results
