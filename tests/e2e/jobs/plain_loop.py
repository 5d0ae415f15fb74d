"""An unmodified training loop: nothing of chakrashim is imported.

  python plain_loop.py [STEPS] [--annotate]

With --annotate, each iteration opens a user annotation "iteration N" at the
start of step N (the test checks that it lies inside ProfilerStep#N).
Prints the loss of every step so that runs with and without the shim can be
compared byte for byte.
"""
import sys

import torch

steps = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 6
annotate = "--annotate" in sys.argv
torch.manual_seed(0)
torch.set_num_threads(1)
torch.use_deterministic_algorithms(True)
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
opt = torch.optim.SGD(model.parameters(), lr=0.05)
x = torch.randn(8, 16)
y = torch.randn(8, 4)
for step in range(steps):
    if annotate:
        with torch.profiler.record_function(f"iteration {step}"):
            loss = torch.nn.functional.mse_loss(model(x), y)
    else:
        loss = torch.nn.functional.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.6f}")
