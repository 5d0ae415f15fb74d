"""A job that runs its own torch.profiler over steps 1..5 (CPU activity):
chakrashim must leave CUPTI to it.

  python profiled.py [STEPS]
"""
import sys

import torch
from torch.profiler import ProfilerActivity, profile

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 8
torch.manual_seed(0)
model = torch.nn.Linear(16, 4)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
prof = None
for step in range(steps):
    if step == 1:
        prof = profile(activities=[ProfilerActivity.CPU])
        prof.__enter__()
    loss = model(torch.randn(8, 16)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step == 5 and prof is not None:
        prof.__exit__(None, None, None)
        print(f"profiler saw {len(prof.events()) > 0}")
    print(f"step {step} loss {loss.item():.6f}")
