"""A loop that updates its weights by hand, without torch.optim: no
optimizer step ever runs, so chakrashim never counts one, and must say so.

  python manual_sgd.py STEPS
"""
import sys

import torch

steps = int(sys.argv[1])
torch.manual_seed(0)
w = torch.randn(8, 2, requires_grad=True)
for step in range(steps):
    loss = (torch.randn(4, 8) @ w).pow(2).mean()
    loss.backward()
    with torch.no_grad():
        w -= 0.01 * w.grad
        w.grad = None
print("done")
