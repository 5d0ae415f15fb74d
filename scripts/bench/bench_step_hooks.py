#!/usr/bin/env python3
"""What chakrashim costs an optimizer step outside its window, in
instructions (callgrind), apart from any op: torch.optim's step wrapper
alone (a parameter without a gradient), plain, with two empty global step
hooks shaped as chakrashim's (the floor of counting steps with those hooks:
Dynamo needs a hook it can trace, so a Python function that checks
torch.compiler.is_dynamo_compiling()), and under chakrashim with its window
never reached (issue #52). Instruction counts do not move with the
machine's load; this loop runs no op, so the heap's state, which moves a
training step's count by a thousand instructions or so from one process to
another, does not blur it.

  python3 scripts/bench/bench_step_hooks.py --preload build/shim/libchakrashim.so [--steps N]
"""
import argparse
import glob
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from bench_common import plain_env  # noqa: E402
from bench_spans import build_region_lib  # noqa: E402

JOB = os.path.join(HERE, "bench_jobs", "step_hooks_loop.py")


def count(mode, args, tmp, lib):
    env = plain_env()
    env["PYTHONHASHSEED"] = "0"
    if mode == "shim":
        env.update(LD_PRELOAD=args.preload, CHAKRA_PROFILE="1", CHAKRA_START_STEP=str(10 ** 9),
                   CHAKRA_END_STEP=str(10 ** 9), CHAKRA_TRACE_DIR=os.path.join(tmp, "traces"),
                   CHAKRA_LOG_LEVEL="warn")
    out = os.path.join(tmp, f"cg-{mode}.%p")
    subprocess.run(["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}",
                    sys.executable, JOB, mode, str(args.steps), lib],
                   env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    dumps = [p for p in glob.glob(os.path.join(tmp, f"cg-{mode}.*")) if p.endswith(".1")]
    if len(dumps) != 1:
        raise SystemExit(f"bench_step_hooks: no callgrind dump of the region for {mode}")
    with open(dumps[0]) as f:
        for line in f:
            if line.startswith(("totals:", "summary:")):
                return int(line.split()[1]) / args.steps
    raise SystemExit(f"bench_step_hooks: no total in {dumps[0]}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--preload", required=True, help="chakrashim's libchakrashim.so")
    ap.add_argument("--steps", type=int, default=1000, help="optimizer steps counted (default 1000)")
    args = ap.parse_args()
    if not shutil.which("valgrind"):
        print("bench_step_hooks: valgrind is not installed (apt-get install valgrind)")
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        lib = build_region_lib(tmp)
        n = {m: count(m, args, tmp, lib) for m in ("plain", "floor", "shim")}
    print(f"an optimizer step that runs no op, instructions a step under callgrind ({args.steps} steps):")
    print(f"  plain (torch's step wrapper alone)       {n['plain']:9.0f}")
    print(f"  two empty step hooks shaped as ours      {n['floor']:9.0f}   +{n['floor'] - n['plain']:6.0f}   "
          f"(the floor of counting steps with torch.optim's hooks)")
    print(f"  chakrashim, its window never reached     {n['shim']:9.0f}   +{n['shim'] - n['plain']:6.0f}   "
          f"({n['shim'] - n['floor']:+.0f} over the floor; x{(n['shim'] - n['plain']) / max(n['floor'] - n['plain'], 1):.2f} "
          f"the floor's added cost)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
