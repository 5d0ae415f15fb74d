#!/usr/bin/env python3
"""What recording op spans costs on the training thread, side by side with
torch.profiler's CPU-only recording of the same steps, and what chakrashim
costs outside its window (issue: op spans at half of torch.profiler's cost).

Runs bench_jobs/mlp_loop.py (about a hundred ops a step) in interleaved
rounds:
  plain      no shim
  profiler   torch.profiler, CPU activity only, over the window's steps
  spans      chakrashim, CHAKRA_HOST_TRACE=0 (op spans only), same steps
  idle       chakrashim loaded, its window never reached
  hooks-floor  (--instructions only) no shim, two empty Python step hooks
             shaped as chakrashim's: the floor of its cost outside a window
  ondemand   chakrashim in on-demand mode (CHAKRA_ON_DEMAND=1), never triggered
  modules    spans with CHAKRA_MODULE_SCOPES=1 (a scope per nn.Module call)
  modules-idle  CHAKRA_MODULE_SCOPES=1, its window never reached
  native-et  chakrashim, spans and its native ET recorder, same steps
  profiler-et  torch.profiler and torch's ExecutionTraceObserver together,
             same steps (NeMo's chakra_profile: both traces its way)
  floor-io   no shim, one empty global callback that sees inputs and
             outputs over the same steps (bench_jobs/floor_callback.cpp): the
             least any ET recorder on RecordFunction pays
and prints the median step time inside the window (and outside it, for
idle), the added cost per op of each recorder and the ratios. The op count
comes from the spans run's own device trace.

With --instructions (needs valgrind), it counts instead the instructions
the window's inner steps execute under callgrind, for plain, profiler and
spans: the same count for the same binaries whatever else the machine is
doing, so the ratio holds on a busy 2-core machine where step times do not.
An instruction is not a nanosecond (a cache miss or a clock read costs
more than its count), so both figures are printed where both were run.
There, module scopes are set beside torch.profiler with with_stack and
with_modules (profiler-modules), torch's own way to module names.
"""
import glob
import shutil
import json
import os
import statistics
import subprocess
import sys
import tempfile

from bench_common import interleaved, job_parser, plain_env

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT_DIR = os.path.dirname(os.path.dirname(HERE))
JOB = os.path.join(HERE, "bench_jobs", "mlp_loop.py")


def run(kind, args, tmp, i):
    out = os.path.join(tmp, f"{kind}-{i}.txt")
    env = plain_env()
    cmd = [sys.executable, JOB, "--steps", str(args.steps), "--out", out]
    if kind in ("profiler", "profiler-et"):
        cmd += ["--profiler", str(args.start), str(args.end)]
        if kind == "profiler-et":
            cmd += ["--with-et", os.path.join(tmp, f"torch-et-{i}.json")]
    if kind == "floor-io":
        cmd += ["--floor", str(args.start), str(args.end), "--floor-lib", args.floor_lib, "--floor-mode", "2"]
    if kind in ("spans", "idle", "ondemand", "modules", "modules-idle", "native-et"):
        env.update(LD_PRELOAD=args.preload, CHAKRA_PROFILE="1",
                   CHAKRA_TRACE_DIR=os.path.join(tmp, f"traces-{kind}-{i}"),
                   CHAKRA_HOST_TRACE="1" if kind == "native-et" else "0", CHAKRA_ET_RECORDER="native",
                   CHAKRA_LOG_LEVEL="warn")
        if kind.startswith("modules"):
            env["CHAKRA_MODULE_SCOPES"] = "1"
        # Every shim run measured with its hooks in, as a job whose steps
        # take longer than this loop's first few would have them: a window
        # of 30 short steps can end before the hooks' thread gets the GIL
        # on a loaded machine (CI: "the modules run recorded no module scope").
        cmd.append("--wait-for-hooks")
        far = str(10 ** 9)
        if kind == "ondemand":
            env["CHAKRA_ON_DEMAND"] = "1"
        else:
            env["CHAKRA_START_STEP"] = far if kind.endswith("idle") else str(args.start)
            env["CHAKRA_END_STEP"] = far if kind.endswith("idle") else str(args.end)
    subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, check=True)
    with open(out) as f:
        return [float(t) for t in f.read().split()]


def build_region_lib(tmp):
    """callgrind_region.c as a shared library (valgrind's header only)."""
    lib = os.path.join(tmp, "libcallgrind_region.so")
    cc = shutil.which("cc") or shutil.which("gcc")
    subprocess.run([cc, "-O2", "-shared", "-fPIC", "-o", lib,
                    os.path.join(HERE, "bench_jobs", "callgrind_region.c")], check=True)
    return lib


def build_floor_lib(tmp):
    """bench_jobs/floor_callback.cpp against this Python's torch, or None
    (and why) where it cannot be built."""
    import torch.utils.cpp_extension as ext
    import torch
    lib = os.path.join(tmp, "libfloor_callback.so")
    cxx = shutil.which("c++") or shutil.which("g++")
    cmd = [cxx, "-O2", "-shared", "-fPIC", "-std=c++17",
           "-D_GLIBCXX_USE_CXX11_ABI=%d" % int(torch._C._GLIBCXX_USE_CXX11_ABI), "-o", lib,
           os.path.join(HERE, "bench_jobs", "floor_callback.cpp")]
    cmd += ["-I" + p for p in ext.include_paths()] + ["-I" + os.path.join(ROOT_DIR, "shim", "src")]
    cmd += ["-L" + p for p in ext.library_paths()] + ["-Wl,-rpath," + p for p in ext.library_paths()]
    cmd += ["-lc10", "-ltorch_cpu"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        return None, r.stderr.strip().splitlines()[-1:] or ["the compiler failed"]
    return lib, None


def count_instructions(kind, args, tmp, lib, floor_lib=None):
    """Instructions of steps start+1 .. end-1 (inside the window), from
    callgrind's dump of that region."""
    out = os.path.join(tmp, f"cg-{kind}.txt")
    cg = os.path.join(tmp, f"callgrind-{kind}.%p")
    env = plain_env()
    env["PYTHONHASHSEED"] = "0"
    cmd = ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={cg}",
           sys.executable, JOB, "--steps", str(args.end + 2), "--out", out,
           "--region", str(args.start + 1), str(args.end - 1), "--region-lib", lib]
    if kind.startswith("profiler"):
        cmd += ["--profiler", str(args.start), str(args.end)]
        if kind == "profiler-modules":
            cmd.append("--with-modules")
        if kind == "profiler-et":
            cmd += ["--with-et", os.path.join(tmp, "torch-et-cg.json")]
    if kind == "hooks-floor":
        cmd.append("--hooks-floor")
    if kind.startswith("floor"):
        mode = {"floor": 0, "floor-et": 1, "floor-io": 2}[kind]
        cmd += ["--floor", str(args.start), str(args.end), "--floor-lib", floor_lib, "--floor-mode", str(mode)]
    if kind in ("spans", "idle", "ondemand", "native-et", "modules", "modules-idle"):
        # idle: loaded, its window never reached (the cost outside a window);
        # ondemand: waiting for a trigger that never comes
        first, last = (args.start, args.end) if kind in ("spans", "modules") else (10 ** 9, 10 ** 9)
        if kind == "native-et":
            first, last = args.start, args.end
        env.update(LD_PRELOAD=args.preload, CHAKRA_PROFILE="1",
                   CHAKRA_HOST_TRACE="1" if kind == "native-et" else "0", CHAKRA_ET_RECORDER="native",
                   CHAKRA_TRACE_DIR=os.path.join(tmp, f"traces-cg-{kind}"), CHAKRA_LOG_LEVEL="warn")
        if kind.startswith("modules"):
            env["CHAKRA_MODULE_SCOPES"] = "1"
        # Every shim run measured with its hooks in, as a job whose steps
        # take longer than this loop's first few would have them: a window
        # of 30 short steps can end before the hooks' thread gets the GIL
        # on a loaded machine (CI: "the modules run recorded no module scope").
        cmd.append("--wait-for-hooks")
        if kind == "ondemand":
            env["CHAKRA_ON_DEMAND"] = "1"
        else:
            env.update(CHAKRA_START_STEP=str(first), CHAKRA_END_STEP=str(last))
    subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    dumps = [p for p in glob.glob(os.path.join(tmp, f"callgrind-{kind}.*")) if p.endswith(".1")]
    if len(dumps) != 1:
        raise SystemExit(f"bench_spans: no callgrind dump of the region for {kind}")
    with open(dumps[0]) as f:
        for line in f:
            if line.startswith("totals:") or line.startswith("summary:"):
                return int(line.split()[1])
    raise SystemExit(f"bench_spans: no total in {dumps[0]}")


def instructions(args):
    if not shutil.which("valgrind"):
        print("bench_spans --instructions: valgrind is not installed (apt-get install valgrind)")
        return 1
    args.start, args.end = (5, 8) if args.quick else (5, 26)
    steps = args.end - args.start - 1
    with tempfile.TemporaryDirectory() as tmp:
        lib = build_region_lib(tmp)
        floor_lib, why = build_floor_lib(tmp)
        kinds = ("plain", "hooks-floor", "profiler", "profiler-et", "spans", "idle", "ondemand", "native-et", "modules",
                 "modules-idle", "profiler-modules") + \
            (("floor", "floor-et", "floor-io") if floor_lib else ())
        counts = {k: count_instructions(k, args, tmp, lib, floor_lib) for k in kinds}
        ops = ops_per_step(tmp, args, pattern="traces-cg-spans")
        calls = module_calls_per_step(tmp, args, pattern="traces-cg-modules")
    n = ops * steps
    plain = counts["plain"]
    prof = (counts["profiler"] - plain) / n
    spans = (counts["spans"] - plain) / n
    print(f"op spans on scripts/bench/bench_jobs/mlp_loop.py under callgrind: instructions of {steps} "
          f"steps inside the window, {ops:.0f} ops a step{' [quick mode]' if args.quick else ''}")
    print(f"  plain                  {plain / n:8.0f} instructions/op")
    print(f"  torch.profiler (CPU)   +{prof:7.0f} instructions/op")
    print(f"  chakrashim spans       +{spans:7.0f} instructions/op")
    if "floor" in counts:
        floor = (counts["floor"] - plain) / n
        print(f"  an empty callback      +{floor:7.0f} instructions/op   (RecordFunction's own work once any "
              f"global callback is on: the floor of both)")
    print(f"  spans' added cost / torch.profiler's: {spans / prof:.2f} (target <= 0.6)")
    if "floor" in counts:
        print(f"  the floor / torch.profiler's: {floor / prof:.2f}; spans above the floor / torch.profiler's above it: "
              f"{(spans - floor) / max(prof - floor, 1):.2f}")
    native = (counts["native-et"] - plain) / n
    print(f"  spans + native ET      +{native:7.0f} instructions/op   step / plain {counts['native-et'] / plain:.3f} "
          f"(target: <= 1.5)")
    prof_et = (counts["profiler-et"] - plain) / n
    print(f"  torch.profiler + torch's ET +{prof_et:7.0f} instructions/op   step / plain "
          f"{counts['profiler-et'] / plain:.3f} (NeMo's way to both traces)")
    if "floor-et" in counts:
        floor_et = (counts["floor-et"] - plain) / n
        print(f"  its empty callbacks    +{floor_et:7.0f} instructions/op   step / plain "
              f"{counts['floor-et'] / plain:.3f} (the span callback and the recorder's two, doing nothing)")
        floor_io = (counts["floor-io"] - plain) / n
        print(f"  one empty callback with inputs and outputs +{floor_io:7.0f} instructions/op   step / plain "
              f"{counts['floor-io'] / plain:.3f} (the least any ET recorder on RecordFunction pays)")
    else:
        print(f"  (no empty-callback floor: {' '.join(why)})")
    print(f"  outside the window: chakrashim idle / plain = {counts['idle'] / plain:.4f} "
          f"(target <= 1.005; issue 52: <= 1.002); +{(counts['idle'] - plain) / steps:.0f} instructions a step, "
          f"beside two empty Python step hooks shaped as ours, the floor of counting steps with torch.optim's "
          f"hooks: {counts['hooks-floor'] / plain:.4f}, +{(counts['hooks-floor'] - plain) / steps:.0f} a step")
    print(f"  on demand, waiting:  chakrashim on-demand / plain = {counts['ondemand'] / plain:.4f} "
          f"(target <= 1.005)")
    module_lines(counts["modules"] - counts["spans"], counts["profiler-modules"] - counts["profiler"],
                 calls * steps, "instructions")
    print(f"  module scopes outside the window: CHAKRA_MODULE_SCOPES=1 idle / plain = "
          f"{counts['modules-idle'] / plain:.4f} (idle without them {counts['idle'] / plain:.4f})")
    return 0


def module_lines(ours, profilers, calls, unit, scale=1.0):
    """Module scopes' added cost per module call, beside torch.profiler's
    with_stack + with_modules over its plain CPU recording (instructions)."""
    print(f"  module scopes (CHAKRA_MODULE_SCOPES=1) over spans  +{ours / calls * scale:9.0f} {unit}/module call "
          f"({calls:.0f} module calls)")
    if profilers is not None:
        print(f"  torch.profiler with_stack+with_modules over it     +{profilers / calls * scale:9.0f} {unit}/module call"
              f"   ours / its: {ours / profilers:.2f}")


def module_calls_per_step(tmp, args, pattern):
    """"nn.Module: " scopes in one captured step of the last modules run."""
    paths = sorted(glob.glob(os.path.join(tmp, pattern, "*_kineto", "rank-0.json")))
    if not paths:
        raise SystemExit(f"bench_spans: no capture of the modules run ({pattern})")
    with open(paths[-1]) as f:
        events = json.load(f)["traceEvents"]
    scopes = [e for e in events if e.get("ph") == "X" and str(e.get("name", "")).startswith("nn.Module: ")]
    if not scopes:
        raise SystemExit("bench_spans: the modules run recorded no module scope")
    return len(scopes) / (args.end - args.start + 1)


def ops_per_step(tmp, args, pattern="traces-spans-*"):
    """Spans in one captured step of the last spans run's device trace."""
    paths = sorted(glob.glob(os.path.join(tmp, pattern, "*_kineto", "rank-0.json")))
    if not paths:
        return None
    with open(paths[-1]) as f:
        events = json.load(f)["traceEvents"]
    spans = [e for e in events if e.get("ph") == "X" and e.get("cat") in ("cpu_op", "user_annotation")]
    return len(spans) / (args.end - args.start + 1)


def main():
    ap = job_parser(__doc__, rounds=7)
    ap.add_argument("--instructions", action="store_true",
                    help="count instructions under callgrind instead of timing steps")
    args = ap.parse_args()
    if args.instructions:
        return instructions(args)
    rounds = 1 if args.quick else args.rounds
    args.steps, args.start, args.end = (30, 10, 20) if args.quick else (600, 200, 400)
    kinds = ["plain", "profiler", "spans", "idle", "ondemand", "modules", "modules-idle", "native-et", "profiler-et"]
    with tempfile.TemporaryDirectory() as tmp:
        args.floor_lib, why = build_floor_lib(tmp)
        if args.floor_lib:
            kinds.append("floor-io")
        res = interleaved(kinds, rounds, lambda k, i: run(k, args, tmp, i))
        ops = ops_per_step(tmp, args)
        calls = module_calls_per_step(tmp, args, pattern="traces-modules-*")
    # Inside: the window's steps but its first and last (arm and disarm).
    inside = range(args.start + 1, args.end)
    outside = list(range(20, args.start - 1)) + list(range(args.end + 2, args.steps))

    def med(kind, steps):
        return statistics.median(statistics.median(r[s] for s in steps) for r in res[kind])

    plain = med("plain", inside)
    prof = med("profiler", inside)
    spans = med("spans", inside)
    print(f"op spans on scripts/bench/bench_jobs/mlp_loop.py: {rounds} interleaved round(s), "
          f"window {args.start}-{args.end}, {ops:.0f} ops a step"
          f"{' [quick mode: not a measurement]' if args.quick else ''}")
    print(f"  step inside the window   plain {plain * 1e6:8.1f} us")
    print(f"                           torch.profiler (CPU)      {prof * 1e6:8.1f} us  "
          f"ratio {prof / plain:.3f}  +{(prof - plain) / ops * 1e6:.2f} us/op")
    print(f"                           chakrashim spans          {spans * 1e6:8.1f} us  "
          f"ratio {spans / plain:.3f}  +{(spans - plain) / ops * 1e6:.2f} us/op")
    print(f"  spans' added cost / torch.profiler's: {(spans - plain) / (prof - plain):.2f} (target <= 0.6)")
    native = med("native-et", inside)
    prof_et = med("profiler-et", inside)
    print(f"                           chakrashim spans + native ET {native * 1e6:8.1f} us  "
          f"ratio {native / plain:.3f} (target <= 1.5)")
    print(f"                           torch.profiler + torch's ET  {prof_et * 1e6:8.1f} us  "
          f"ratio {prof_et / plain:.3f} (NeMo's way to both traces)")
    if "floor-io" in res:
        floor_io = med("floor-io", inside)
        print(f"                           one empty callback with inputs and outputs {floor_io * 1e6:8.1f} us  "
              f"ratio {floor_io / plain:.3f} (the least any ET recorder on RecordFunction pays)")
    else:
        print(f"  (no empty-callback floor: {' '.join(why)})")
    idle = med("idle", outside)
    plain_out = med("plain", outside)
    print(f"  step outside the window  plain {plain_out * 1e6:8.1f} us   chakrashim idle "
          f"{idle * 1e6:8.1f} us   ratio {idle / plain_out:.4f} (target <= 1.005)")
    waiting = med("ondemand", outside)
    print(f"  on demand, waiting       plain {plain_out * 1e6:8.1f} us   chakrashim on-demand "
          f"{waiting * 1e6:8.1f} us   ratio {waiting / plain_out:.4f} (target <= 1.005)")
    modules = med("modules", inside)
    print(f"                           chakrashim spans + module scopes {modules * 1e6:8.1f} us  "
          f"ratio {modules / plain:.3f}")
    module_lines((modules - spans) * 1e9, None, calls, "ns")
    print(f"  module scopes outside the window: plain {plain_out * 1e6:8.1f} us   CHAKRA_MODULE_SCOPES=1 idle "
          f"{med('modules-idle', outside) * 1e6:8.1f} us   ratio {med('modules-idle', outside) / plain_out:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
