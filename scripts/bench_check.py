#!/usr/bin/env python3
"""Times `chakrashim check` on the golden real device trace and reports its
peak memory next to the file's size (issue 3: well under a second, and far
below the file in memory, because the parse streams).

    bench_check.py [--cli PATH] [--golden DIR] [--runs N] [--quick]

The golden pair (docs/trace-format.md, "Golden pair"; not in the repository:
--golden DIR, or CHAKRASHIM_TEST_GOLDEN_DIR as CTest sets it) is decompressed into a
temporary folder first, so the figures are for plain JSON. Prints figures
only; never fails on them.

Peak RSS: Linux charges a process, at exec, with the peak of the memory it
had before (signal->maxrss), and a child of Python starts as a copy of this
interpreter, so os.wait4's ru_maxrss is at least Python's own size. GNU time
(/usr/bin/time), a small process, forks the check itself and reports its
ru_maxrss; it is used when present. Otherwise the wait4 figure is printed as
an upper bound. The `--version` row is the floor of either method.
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


GNU_TIME = "/usr/bin/time"


def run_once(cmd):
    """(wall seconds, peak RSS bytes, exit status) of one run."""
    fd, report = tempfile.mkstemp(prefix="chakra-bench-rss-")
    os.close(fd)
    try:
        gnu = os.access(GNU_TIME, os.X_OK)
        full = [GNU_TIME, "-q", "-o", report, "-f", "%M"] + cmd if gnu else cmd
        start = time.perf_counter()
        proc = subprocess.Popen(full, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        peak_kib = usage.ru_maxrss
        if gnu:
            with open(report) as f:
                peak_kib = int(f.read().split()[-1])
        return wall, peak_kib * 1024, os.waitstatus_to_exitcode(status)
    finally:
        os.remove(report)


def mib(n):
    return "%.1f MiB" % (n / 1048576.0)


def bench(label, cmd, size, runs):
    results = [run_once(cmd) for _ in range(runs)]
    statuses = {r[2] for r in results}
    wall = statistics.median(r[0] for r in results)
    peak = max(r[1] for r in results)
    ratio = "(%.2fx the input)" % (peak / size) if size else "(no input)"
    print("%-36s %9s  median %.3f s over %d run%s  peak RSS %9s %-18s  exit %s" % (
        label, mib(size) if size else "-", wall, runs, "" if runs == 1 else "s", mib(peak), ratio,
        ",".join(map(str, sorted(statuses)))))


def scale_trace(src, dst, times):
    """The golden device trace with its event list repeated `times` times, as
    raw text (the parse under test must not care that ids repeat)."""
    with open(src) as f:
        text = f.read()
    start = text.index("[", text.index('"traceEvents"')) + 1
    end = text.rindex("]", start, text.index('"INFO"')) if '"INFO"' in text else text.rindex("]")
    body = text[start:end].rstrip().rstrip(",")
    with open(dst, "w") as f:
        f.write(text[:start])
        f.write(",\n".join([body] * times))
        f.write(text[end:])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cli", default=os.environ.get("CHAKRASHIM_TEST_CLI") or
                    os.path.join(HERE, "..", "build", "tools", "chakrashim"))
    ap.add_argument("--golden", default=os.environ.get("CHAKRASHIM_TEST_GOLDEN_DIR", ""),
                    help="folder of the golden pair (default: $CHAKRASHIM_TEST_GOLDEN_DIR)")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--scale", type=int, default=10,
                    help="also check a device trace with the golden events repeated this many times "
                         "(memory must not follow the file's size); 0 or --quick: skip")
    ap.add_argument("--quick", action="store_true", help="one run of each (CI)")
    args = ap.parse_args()
    runs = 1 if args.quick else max(1, args.runs)
    if not os.access(args.cli, os.X_OK):
        print("bench_check: no chakrashim at %s; build first" % args.cli, file=sys.stderr)
        return 2
    device_gz = os.path.join(args.golden, "device.0.json.gz")
    host_gz = os.path.join(args.golden, "host.0.json.gz")
    if not args.golden or not os.path.isfile(device_gz):
        where = ("no golden device trace at %s" % device_gz) if args.golden else "no golden pair given"
        print("bench_check: skipped, %s (--golden DIR or CHAKRASHIM_TEST_GOLDEN_DIR; "
              "docs/trace-format.md, \"Golden pair\")" % where)
        return 0
    with tempfile.TemporaryDirectory(prefix="chakra-bench-check-") as tmp:
        device = os.path.join(tmp, "device.0.json")
        host = os.path.join(tmp, "host.0.json")
        for src, dst in ((device_gz, device), (host_gz, host)):
            with gzip.open(src, "rb") as f, open(dst, "wb") as g:
                shutil.copyfileobj(f, g)
        dsize, hsize = os.path.getsize(device), os.path.getsize(host)
        how = "GNU time" if os.access(GNU_TIME, os.X_OK) else "os.wait4, an upper bound"
        print("chakrashim check on the golden pair (%s); peak RSS by %s" % (os.path.abspath(args.golden), how))
        bench("floor: chakrashim --version", [args.cli, "--version"], 0, runs)
        bench("device trace alone", [args.cli, "check", device], dsize, runs)
        bench("ET + device trace", [args.cli, "check", host, device], dsize + hsize, runs)
        bench("ET + device trace, gzip as shipped", [args.cli, "check", host_gz, device_gz],
              os.path.getsize(host_gz) + os.path.getsize(device_gz), runs)
        if args.scale > 1 and not args.quick:
            big = os.path.join(tmp, "device.big.json")
            scale_trace(device, big, args.scale)
            bench("device trace, events x%d" % args.scale, [args.cli, "check", big],
                  os.path.getsize(big), runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
