"""A job whose steps run many small ops, so that a window of a few steps
takes seconds to write: nothing of chakrashim is imported.

  python many_ops.py STEPS OPS_PER_STEP

Each step runs OPS_PER_STEP small adds on the main thread, then the
optimizer step. Prints "training done" (flushed) after the last step, then
returns: the interpreter exits, and a window still open is written at exit.
"""
import sys

import torch

steps, ops = int(sys.argv[1]), int(sys.argv[2])
torch.manual_seed(0)
torch.set_num_threads(1)
model = torch.nn.Linear(8, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn(4, 8)
a = torch.zeros(4)
for step in range(steps):
    for _ in range(ops):
        a = a + 1
    loss = model(x).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
print("training done", flush=True)
