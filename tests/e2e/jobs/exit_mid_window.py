"""Ends inside the window: `exit N` calls sys.exit(N) after step 3, `raise`
raises an uncaught exception there."""
import sys

import torch

how = sys.argv[1]
torch.manual_seed(0)
model = torch.nn.Linear(8, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(10):
    loss = model(torch.randn(4, 8)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"step {step}", flush=True)
    if step == 3:
        if how == "raise":
            raise RuntimeError("the job failed in mid-window")
        sys.exit(int(sys.argv[2]))
