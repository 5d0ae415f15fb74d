"""Ends inside the window: `exit N` calls sys.exit(N) after step 3, `raise`
raises an uncaught exception there, `os_exit N` calls os._exit(N) (no exit
handler of anyone runs), `sigkill` kills the process with SIGKILL."""
import os
import signal
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
        if how == "os_exit":
            os._exit(int(sys.argv[2]))
        if how == "sigkill":
            os.kill(os.getpid(), signal.SIGKILL)
        sys.exit(int(sys.argv[2]))
