#!/usr/bin/env python3
"""Peak memory under CHAKRA_MAX_MEMORY: the bundled example with a window far
larger than the cap, against the same run without the shim and against a
run with the same window and no cap worth the name.

Prints peak RSS (the child's ru_maxrss) of each and the difference to the
run without the shim, next to the cap. The promise (README, Cost): the
difference stays within the cap plus a constant.
"""
import argparse
import os
import resource
import subprocess
import sys
import tempfile

from bench_common import plain_env

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLE = os.path.join(ROOT, "examples", "train_tiny.py")


def peak_rss_mib(cmd, env):
    """Peak RSS of one child, in MiB, measured in a fresh child of ours."""
    probe = ("import resource, subprocess, sys; subprocess.run(sys.argv[1:], check=True, "
             "stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL); "
             "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    out = subprocess.run([sys.executable, "-c", probe, *cmd], env=env, capture_output=True,
                         text=True, check=True).stdout
    return int(out.strip()) / 1024.0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preload", required=True)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--cap", default="32M")
    ap.add_argument("--et", choices=("off", "torch", "native"), default="off",
                    help="the ET too, by this recorder (CHAKRA_ET_RECORDER)")
    args = ap.parse_args()
    steps = 20 if args.quick else 120
    base = plain_env()
    cmd = [sys.executable, EXAMPLE, "--steps", str(steps)]
    with tempfile.TemporaryDirectory() as tmp:
        def shim(cap, name):
            return dict(base, LD_PRELOAD=args.preload, CHAKRA_PROFILE="1", CHAKRA_START_STEP="1",
                        CHAKRA_END_STEP="1000000", CHAKRA_MAX_MEMORY=cap,
                        CHAKRA_HOST_TRACE="0" if args.et == "off" else "1",
                        CHAKRA_ET_RECORDER="native" if args.et == "native" else "torch",
                        CHAKRA_TRACE_DIR=os.path.join(tmp, name))
        plain = peak_rss_mib(cmd, base)
        capped = peak_rss_mib(cmd, shim(args.cap, "capped"))
        uncapped = peak_rss_mib(cmd, shim("64G", "uncapped"))
    print(f"peak RSS on examples/train_tiny.py, {steps} steps, window from step 1 to the end "
          f"({'device trace only' if args.et == 'off' else args.et + ' ET and device trace'})"
          f"{' [quick mode]' if args.quick else ''}")
    print(f"  no shim                       {plain:8.1f} MiB")
    print(f"  CHAKRA_MAX_MEMORY={args.cap:<6}      {capped:8.1f} MiB   +{capped - plain:.1f} MiB")
    print(f"  no cap (64G)                  {uncapped:8.1f} MiB   +{uncapped - plain:.1f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
