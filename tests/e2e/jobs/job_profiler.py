"""A job that runs its own torch.profiler the usual way: a schedule, and
prof.step() at the end of every iteration. torch then opens a record
"ProfilerStep#N" in every step, N counted by the job's profiler from the
iteration it started at (so N is the iteration only when it starts at 0).

  python job_profiler.py STEPS FROM OUT

FROM  the iteration at which the job's profiler starts;
OUT   a folder for the job's own profiler output: the Chrome trace its
      on_trace_ready handler exports (job_trace.json).
Prints the ProfilerStep#N its own profile recorded ("job steps: [...]") and
the names of the ops it recorded ("job ops: N names").
"""
import json
import os
import sys

import torch
from torch.profiler import ProfilerActivity, profile, schedule

steps, start, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
os.makedirs(out, exist_ok=True)


def ready(p):
    p.export_chrome_trace(os.path.join(out, "job_trace.json"))


torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
prof = None
for step in range(steps):
    if step == start:
        # wait 1, warm-up 1, record 3: the profiler's steps 2..4 are kept.
        prof = profile(activities=[ProfilerActivity.CPU],
                       schedule=schedule(wait=1, warmup=1, active=3, repeat=1),
                       on_trace_ready=ready)
        prof.__enter__()
    loss = model(torch.randn(8, 16)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    if prof is not None:
        prof.step()
    print(f"step {step} loss {loss.item():.6f}")
if prof is not None:
    prof.__exit__(None, None, None)
with open(os.path.join(out, "job_trace.json")) as f:
    events = json.load(f)["traceEvents"]
names = sorted(e["name"] for e in events if e.get("name", "").startswith("ProfilerStep#"))
print("job steps:", names)
print("job ops:", len({e["name"] for e in events if e.get("cat") == "cpu_op"}), "names")
