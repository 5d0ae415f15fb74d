"""An op-heavy training loop for the span benchmarks: a small MLP (about a
hundred ops a step, a few hundred microseconds), SGD, fixed data.

  python mlp_loop.py --steps N --out FILE [--profiler START END]
                     [--with-et PATH] [--floor START END --floor-lib LIB [--floor-mode M]]
                     [--region A B --region-lib LIB] [--wait-for-hooks] [--hooks-floor]

Writes each step's wall time (seconds, one per line) to FILE. With
--profiler, runs torch.profiler (CPU activity only, no shapes, no stack, no
ET) from the start of step START to the end of step END, as a user measuring
the same steps would; its stop and export come after END and are not timed.
--with-modules: the profiler with with_stack and with_modules (torch's way
to module names: its Python tracer).
With --floor, calls LIB's floor_on before step START and floor_off after
step END (bench_jobs/floor_callback.cpp: an empty global RecordFunction
callback, the floor of any recorder built on them; --floor-mode 1: also
two more as the native ET recorder registers its own; 2: one that sees
inputs and outputs, the least any ET recorder on them needs).
With --hooks-floor, two global optimizer step hooks shaped as chakrashim's
(three parameters and a torch.compiler.is_dynamo_compiling() check, nothing
else): the least that counting steps with torch.optim's hooks costs.
With --region, calls LIB's region_start before step A and region_stop after
step B (callgrind's client requests: scripts/bench/bench_jobs/callgrind_region.c).
"""
import argparse
import ctypes
import gc
import time

import torch

ap = argparse.ArgumentParser()
ap.add_argument("--steps", type=int, required=True)
ap.add_argument("--out", required=True)
ap.add_argument("--profiler", nargs=2, type=int)
ap.add_argument("--with-et", metavar="PATH",
                help="with --profiler: torch's ExecutionTraceObserver too, writing PATH (NeMo's way to both "
                     "traces: its chakra_profile block)")
ap.add_argument("--with-modules", action="store_true",
                help="with --profiler: with_stack and with_modules, as a user wanting module names would")
ap.add_argument("--floor", nargs=2, type=int)
ap.add_argument("--floor-lib")
ap.add_argument("--floor-mode", type=int, default=0, choices=(0, 1, 2))
ap.add_argument("--region", nargs=2, type=int)
ap.add_argument("--region-lib")
ap.add_argument("--hooks-floor", action="store_true",
                help="register two global optimizer step hooks shaped as chakrashim's (three parameters, a "
                     "torch.compiler.is_dynamo_compiling() check) that do nothing else: the least that counting "
                     "steps with torch.optim's hooks costs, under Dynamo's rule that a hook be traceable")
ap.add_argument("--wait-for-hooks", action="store_true",
                help="under chakrashim: before the first step, wait (60 s at most) until its optimizer hooks "
                     "are in, which also makes its module scopes; they come from a thread of its own that "
                     "needs the GIL, and a loaded machine can hold it past this short job's window")
args = ap.parse_args()
region = ctypes.CDLL(args.region_lib) if args.region else None
floor = ctypes.CDLL(args.floor_lib) if args.floor else None

torch.manual_seed(0)
torch.set_num_threads(1)
layers = []
for _ in range(2):
    layers += [torch.nn.Linear(32, 32), torch.nn.ReLU()]
model = torch.nn.Sequential(*layers, torch.nn.Linear(32, 4))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x, y = torch.randn(8, 32), torch.randn(8, 4)
if args.wait_for_hooks:
    import torch.optim.optimizer as optimizer_impl
    opt.zero_grad()  # the shim's first sign of training starts its registrar
    deadline = time.monotonic() + 60
    while not optimizer_impl._global_optimizer_post_hooks and time.monotonic() < deadline:
        time.sleep(0.01)
if args.hooks_floor:
    import floor_hooks
    floor_hooks.register()
prof = None
times = []
for step in range(args.steps):
    if args.profiler and step == args.profiler[0]:
        et = None
        if args.with_et:
            et = torch.profiler.ExecutionTraceObserver()
            et.register_callback(args.with_et)
        prof = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU],
                                      with_stack=args.with_modules, with_modules=args.with_modules,
                                      execution_trace_observer=et)
        prof.__enter__()
    if floor is not None and step == args.floor[0]:
        floor.floor_on(args.floor_mode)
    if region is not None and step == args.region[0]:
        # The collector starts the region from nothing in every run: the
        # objects a run made before it (the shim's hooks, its registrar's
        # Python) would otherwise move a collection into or out of the
        # region, thousands of instructions a step that are no one's cost.
        gc.collect()
        region.region_start()
    t0 = time.perf_counter()
    loss = torch.nn.functional.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    times.append(time.perf_counter() - t0)
    if region is not None and step == args.region[1]:
        region.region_stop()
    if floor is not None and step == args.floor[1]:
        floor.floor_off()
    if prof is not None and step == args.profiler[1]:
        prof.__exit__(None, None, None)
        prof = None
with open(args.out, "w") as f:
    f.write("\n".join(f"{t:.9f}" for t in times))
