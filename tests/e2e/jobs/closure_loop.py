"""A loop whose forward and backward run inside the optimizer's step, in the
closure it calls, as PyTorch Lightning runs every training step (and as
LBFGS needs): nothing of chakrashim is imported.

  python closure_loop.py STEPS
"""
import sys

import torch

steps = int(sys.argv[1])
torch.manual_seed(0)
torch.set_num_threads(1)
model = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.ReLU(), torch.nn.Linear(256, 8))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x, y = torch.randn(32, 64), torch.randn(32, 8)


def closure():
    opt.zero_grad()
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
    return loss


for step in range(steps):
    loss = opt.step(closure)
    print(f"step {step} loss {loss.item():.6f}")
