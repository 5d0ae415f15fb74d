"""Writes a REAL torch.profiler capture of a tiny CPU training loop: the
Execution Trace from torch's ExecutionTraceObserver and the Kineto trace
from torch.profiler, for `chakrashim check` to read as it would any user's.

    python make_torch_trace.py OUT_DIR [--nemo | --all-steps]  ->  OUT_DIR/et.json, OUT_DIR/kineto.json

--nemo: as NeMo's ModelPT chakra_profile with its default active_steps=1
writes it: a schedule of one active step a cycle, repeating, on_trace_ready
writing each cycle's trace over the one before, and the ET observer on for
all 5 steps (the ET holds ProfilerStep#0-4, the device trace #4 only).
--all-steps: one cycle of 5 active steps: both files hold ProfilerStep#0-4.
"""
import os
import sys

import torch
from torch.profiler import ExecutionTraceObserver, ProfilerActivity, profile, schedule


def main(out, nemo=False, all_steps=False):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    et = ExecutionTraceObserver().register_callback(os.path.join(out, "et.json"))

    def ready(prof):
        prof.export_chrome_trace(os.path.join(out, "kineto.json"))

    plan = (schedule(wait=0, warmup=0, active=1) if nemo
            else schedule(wait=0, warmup=0, active=5, repeat=1) if all_steps
            else schedule(wait=1, warmup=1, active=2, repeat=1))
    with profile(activities=[ProfilerActivity.CPU], schedule=plan,
                 on_trace_ready=ready, execution_trace_observer=et) as prof:
        for _ in range(5):
            x, y = torch.randn(4, 8), torch.randn(4, 1)
            opt.zero_grad()
            torch.nn.functional.mse_loss(model(x), y).backward()
            opt.step()
            prof.step()
    et.unregister_callback()


if __name__ == "__main__":
    main(sys.argv[1], "--nemo" in sys.argv[2:], "--all-steps" in sys.argv[2:])
