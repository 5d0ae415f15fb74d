"""Every side op on a short-lived thread of its own (issue #34, item 8):
each step starts and joins OPS threads, one after another, each running one
small op, then takes an optimizer step.

  python thread_per_op.py [STEPS] [OPS]
"""
import sys
import threading

import torch

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 4
ops = int(sys.argv[2]) if len(sys.argv) > 2 else 100
torch.set_num_threads(1)
torch.manual_seed(0)
model = torch.nn.Linear(16, 4)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
a = torch.ones(8, 8)


def one_op():
    a.add(1.0)


for step in range(steps):
    for _ in range(ops):
        t = threading.Thread(target=one_op)
        t.start()
        t.join()
    loss = model(torch.randn(8, 16)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"step {step}", flush=True)
