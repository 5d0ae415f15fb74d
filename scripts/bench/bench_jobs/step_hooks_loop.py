"""Optimizer steps that do nothing but torch's step wrapper: what counting
steps with torch.optim's step hooks costs a step, apart from any op (the
step of a parameter without a gradient runs no op), for
scripts/bench/bench_step_hooks.py.

  python step_hooks_loop.py MODE STEPS REGION_LIB

MODE: plain (no hook), floor (two global step hooks shaped as chakrashim's:
three parameters and a torch.compiler.is_dynamo_compiling() check, nothing
else), shim (run under chakrashim: waits until its hooks are in). Calls
REGION_LIB's region_start before the first counted step and region_stop
after the last (scripts/bench/bench_jobs/callgrind_region.c); the garbage
collector is off over the region, so that no collection lands in it.
"""
import ctypes
import gc
import sys
import time

import torch
import torch.optim.optimizer as optimizer_impl

mode, steps, region = sys.argv[1], int(sys.argv[2]), ctypes.CDLL(sys.argv[3])
param = torch.nn.Parameter(torch.zeros(1))
opt = torch.optim.SGD([param], lr=0.1)
# One backward, as a training job runs (chakrashim counts by hooks once a
# process trains); then no gradient, so that each step runs no op.
(param * 2).sum().backward()
opt.zero_grad(set_to_none=True)

if mode == "floor":
    import floor_hooks
    floor_hooks.register()
elif mode == "shim":
    deadline = time.monotonic() + 60
    while not optimizer_impl._global_optimizer_post_hooks and time.monotonic() < deadline:
        time.sleep(0.01)
    if not optimizer_impl._global_optimizer_post_hooks:
        sys.exit("step_hooks_loop: chakrashim's optimizer hooks never came in")

warmup = 300  # past the shim's first 256 steps, where it also reads the optimizer's groups
for i in range(warmup + steps):
    if i == warmup:
        gc.collect()
        gc.disable()
        region.region_start()
    opt.step()
region.region_stop()
gc.enable()
