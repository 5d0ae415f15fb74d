#!/usr/bin/env python3
"""Times `chakrashim link` on generated ET and device-trace pairs of growing
size and prints its wall time and peak RSS next to the files' sizes (issue
9: 150 MB well under 10 s and under 0.5 GB, growth close to linear). Where
MLCommons' chakra_trace_link is installed it runs on the same pairs, side by
side; where it is not, the script says so.

    bench_link.py [--cli PATH] [--sizes MB,MB,...] [--runs N] [--quick]

Pairs come from tests/support/link_trace_gen.py (threads, nesting, NCCL
kernels, memcpys and memsets, ET nodes in torch's order), written into a
temporary folder. Default sizes: 15, 150 and 1000 MB of device trace; --quick
runs 15 MB once (CI). Peak RSS as bench_common.py measures it (GNU time when
present, else os.wait4's upper bound). Prints figures only; never fails on
them.
"""
import os
import shutil
import subprocess
import sys
import tempfile

from bench_common import cli_missing, measure, mib, rss_method, tool_parser
import link_trace_gen  # tests/support, on the path by bench_common

# A training-like shape: 4 threads, nests of 4, 2 kernels per op, 10% NCCL.
SHAPE = dict(ops_per_step=400, depth=4, threads=4, kernels_per_op=2, nccl_share=0.1, arg_size=3)


def chakra_linker():
    """The chakra_trace_link command, or None."""
    path = shutil.which("chakra_trace_link")
    if path:
        return [path]
    probe = subprocess.run([sys.executable, "-c", "import chakra.src.trace_link.trace_link"],
                           capture_output=True)
    return [sys.executable, "-m", "chakra.src.trace_link.trace_link"] if probe.returncode == 0 else None


def main():
    ap = tool_parser(__doc__, "15 MB, one run (CI)")
    ap.add_argument("--sizes", default="15,150,1000", help="device-trace sizes in MB")
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    if cli_missing("bench_link", args.cli):
        return 2
    sizes = [15.0] if args.quick else [float(s) for s in args.sizes.split(",") if s]
    runs = 1 if args.quick else max(1, args.runs)
    chakra = chakra_linker()
    print("chakrashim link on generated pairs (%s); peak RSS by %s" %
          (", ".join("%s=%s" % kv for kv in SHAPE.items()), rss_method()))
    if chakra is None:
        print("chakra_trace_link is not installed here: no side-by-side comparison "
              "(issue 9's figures for it: about 4 s for 10 MB, 151 s and 1.9 GB for 142 MB)")
    print("%-10s %10s %10s  %-34s %s" % ("device", "ET", "ET+ out", "chakrashim link", "chakra_trace_link"))
    previous = None
    for size in sizes:
        with tempfile.TemporaryDirectory(prefix="chakra-bench-link-") as tmp:
            et, dev, out = (os.path.join(tmp, n) for n in ("et.json", "device.json", "linked.json"))
            link_trace_gen.generate(et, dev, steps=1, device_mb=size, **SHAPE)
            dsize, esize = os.path.getsize(dev), os.path.getsize(et)
            wall, _, peak, status = measure([args.cli, "link", "--host", et, "--device", dev, "--output", out], runs)
            osize = os.path.getsize(out) if os.path.exists(out) else 0
            ours = "%7.2f s %10s exit %s" % (wall, mib(peak), status)
            theirs = "not installed"
            if chakra is not None and not args.quick:
                c_out = os.path.join(tmp, "chakra.json")
                c_wall, _, c_peak, c_status = measure(chakra + ["--rank", "0", "--chakra-host-trace", et,
                                                                "--chakra-device-trace", dev, "--output-file", c_out], 1)
                theirs = "%7.2f s %10s exit %s (%.0fx)" % (c_wall, mib(c_peak), c_status, c_wall / max(wall, 1e-9))
            growth = ""
            if previous:
                growth = "  time x%.1f for size x%.1f" % (wall / max(previous[1], 1e-9), dsize / previous[0])
            previous = (dsize, wall)
            print("%-10s %10s %10s  %-34s %s%s" % (mib(dsize), mib(esize), mib(osize), ours, theirs, growth))
    return 0


if __name__ == "__main__":
    sys.exit(main())
