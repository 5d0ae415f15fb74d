"""A job that runs its own torch.profiler over steps FROM..TO (CPU
activity; 1..5 by default): chakrashim must leave CUPTI to it, also when it
starts inside the capture window.

  python profiled.py [STEPS [FROM TO]]
"""
import sys

import torch
from torch.profiler import ProfilerActivity, profile

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 8
start, stop = (int(sys.argv[2]), int(sys.argv[3])) if len(sys.argv) > 3 else (1, 5)
torch.manual_seed(0)
model = torch.nn.Linear(16, 4)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
prof = None
for step in range(steps):
    if step == start:
        prof = profile(activities=[ProfilerActivity.CPU])
        prof.__enter__()
    loss = model(torch.randn(8, 16)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step == stop and prof is not None:
        prof.__exit__(None, None, None)
        print(f"profiler saw {len(prof.events()) > 0}")
    print(f"step {step} loss {loss.item():.6f}")
