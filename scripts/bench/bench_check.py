#!/usr/bin/env python3
"""Times `chakrashim check` on the golden real device trace and reports its
peak memory next to the file's size (issue 3: well under a second, and far
below the file in memory, because the parse streams).

    bench_check.py [--cli PATH] [--golden DIR] [--runs N] [--quick]

The golden pair (docs/trace-format.md, "Golden pair"; not in the repository:
--golden DIR, or CHAKRASHIM_TEST_GOLDEN_DIR as CTest sets it) is decompressed into a
temporary folder first, so the figures are for plain JSON. Prints figures
only; never fails on them.

Peak RSS as scripts/bench/bench_common.py measures it (GNU time when present,
else os.wait4's upper bound). The `--version` row is the floor of either
method.
"""
import gzip
import os
import shutil
import sys
import tempfile

from bench_common import cli_missing, measure, mib, rss_method, tool_parser


def bench(label, cmd, size, runs):
    wall, _, peak, statuses = measure(cmd, runs)
    ratio = "(%.2fx the input)" % (peak / size) if size else "(no input)"
    print("%-36s %9s  median %.3f s over %d run%s  peak RSS %9s %-18s  exit %s" % (
        label, mib(size) if size else "-", wall, runs, "" if runs == 1 else "s", mib(peak), ratio, statuses))


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
    ap = tool_parser(__doc__, "one run of each (CI)")
    ap.add_argument("--golden", default=os.environ.get("CHAKRASHIM_TEST_GOLDEN_DIR", ""),
                    help="folder of the golden pair (default: $CHAKRASHIM_TEST_GOLDEN_DIR)")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--scale", type=int, default=10,
                    help="also check a device trace with the golden events repeated this many times "
                         "(memory must not follow the file's size); 0 or --quick: skip")
    args = ap.parse_args()
    runs = 1 if args.quick else max(1, args.runs)
    if cli_missing("bench_check", args.cli):
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
        print("chakrashim check on the golden pair (%s); peak RSS by %s" % (os.path.abspath(args.golden),
                                                                          rss_method()))
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
