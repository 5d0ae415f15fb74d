#!/usr/bin/env python3
"""Times `chakrashim check` on the golden real device trace and reports its
peak memory next to the file's size (issue 3: well under a second, and far
below the file in memory, because the parse streams).

    bench_check.py [--cli PATH] [--golden DIR] [--runs N] [--quick]

The golden pair (../shared/fixtures/chakra-link/) is decompressed into a
temporary folder first, so the figures are for plain JSON. Peak RSS is the
child's ru_maxrss from os.wait4. Prints figures only; never fails on them.
"""
import argparse
import gzip
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def run_once(cmd):
    """(wall seconds, peak RSS bytes, exit status) of one run."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    return wall, usage.ru_maxrss * 1024, proc.returncode


def mib(n):
    return "%.1f MiB" % (n / 1048576.0)


def bench(label, cmd, size, runs):
    results = [run_once(cmd) for _ in range(runs)]
    statuses = {r[2] for r in results}
    wall = statistics.median(r[0] for r in results)
    peak = max(r[1] for r in results)
    print("%-36s %9s  median %.3f s over %d run%s  peak RSS %9s (%.2fx the input)  exit %s" % (
        label, mib(size), wall, runs, "" if runs == 1 else "s", mib(peak), peak / size,
        ",".join(map(str, sorted(statuses)))))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cli", default=os.environ.get("CHAKRASHIM_TEST_CLI") or
                    os.path.join(HERE, "..", "build", "tools", "chakrashim"))
    ap.add_argument("--golden", default=os.path.join(HERE, "..", "..", "shared", "fixtures", "chakra-link"))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="one run of each (CI)")
    args = ap.parse_args()
    runs = 1 if args.quick else max(1, args.runs)
    if not os.access(args.cli, os.X_OK):
        print("bench_check: no chakrashim at %s; build first" % args.cli, file=sys.stderr)
        return 2
    device_gz = os.path.join(args.golden, "device.0.json.gz")
    host_gz = os.path.join(args.golden, "host.0.json.gz")
    if not os.path.isfile(device_gz):
        print("bench_check: skipped, no golden device trace at %s" % device_gz)
        return 0
    with tempfile.TemporaryDirectory(prefix="chakra-bench-check-") as tmp:
        device = os.path.join(tmp, "device.0.json")
        host = os.path.join(tmp, "host.0.json")
        for src, dst in ((device_gz, device), (host_gz, host)):
            with gzip.open(src, "rb") as f, open(dst, "wb") as g:
                shutil.copyfileobj(f, g)
        dsize, hsize = os.path.getsize(device), os.path.getsize(host)
        print("chakrashim check on the golden pair (%s)" % os.path.abspath(args.golden))
        bench("device trace alone", [args.cli, "check", device], dsize, runs)
        bench("ET + device trace", [args.cli, "check", host, device], dsize + hsize, runs)
        bench("ET + device trace, gzip as shipped", [args.cli, "check", host_gz, device_gz],
              os.path.getsize(host_gz) + os.path.getsize(device_gz), runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
