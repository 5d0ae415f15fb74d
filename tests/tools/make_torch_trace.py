"""Writes a REAL torch.profiler capture of a tiny CPU training loop: the
Execution Trace from torch's ExecutionTraceObserver and the Kineto trace
from torch.profiler, for `chakrashim check` to read as it would any user's.

    python make_torch_trace.py OUT_DIR   ->  OUT_DIR/et.json, OUT_DIR/kineto.json
"""
import os
import sys

import torch
from torch.profiler import ExecutionTraceObserver, ProfilerActivity, profile, schedule


def main(out):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    et = ExecutionTraceObserver().register_callback(os.path.join(out, "et.json"))

    def ready(prof):
        prof.export_chrome_trace(os.path.join(out, "kineto.json"))

    with profile(activities=[ProfilerActivity.CPU], schedule=schedule(wait=1, warmup=1, active=2, repeat=1),
                 on_trace_ready=ready, execution_trace_observer=et) as prof:
        for _ in range(5):
            x, y = torch.randn(4, 8), torch.randn(4, 1)
            opt.zero_grad()
            torch.nn.functional.mse_loss(model(x), y).backward()
            opt.step()
            prof.step()
    et.unregister_callback()


if __name__ == "__main__":
    main(sys.argv[1])
