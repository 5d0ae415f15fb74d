"""A job whose first sign of training is its first optimizer step: no
zero_grad(), no backward (gradients set by hand), so chakrashim's thread
that installs torch.optim's step hooks (and, with them, module scopes)
starts only when step 0 ends. A window from step 1 then opens before they
are in. Each step sleeps 50 ms (the GIL free), so they are in by its end.
Nothing of chakrashim in it.

  python late_hooks.py STEPS
"""
import sys
import time

import torch

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 5
torch.manual_seed(0)
torch.set_num_threads(1)
model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn(4, 8)
for step in range(steps):
    with torch.no_grad():
        out = model(x)
    for p in model.parameters():
        p.grad = torch.ones_like(p) * out.mean()
    opt.step()
    time.sleep(0.05)
    print(f"step {step} out {out.sum().item():.6f}", flush=True)
