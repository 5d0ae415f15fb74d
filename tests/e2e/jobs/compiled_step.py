"""A job that compiles its optimizer step (torch.compile(backend="eager")
around opt.step(), as PyTorch's "compiling the optimizer" recipe does):
nothing of chakrashim is imported.

  python compiled_step.py STEPS

Prints each step's loss, then "graph_breaks N": Dynamo's graph breaks. Any
hook of chakrashim's that Dynamo could not trace would add one (and a
UserWarning naming it on stderr), as it did before issue #48.
"""
import sys

import torch

steps = int(sys.argv[1])
torch.manual_seed(0)
torch.set_num_threads(1)
model = torch.nn.Linear(8, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.01)


@torch.compile(backend="eager")
def step():
    opt.step()


x, y = torch.randn(4, 8), torch.randn(4, 2)
for i in range(steps):
    loss = torch.nn.functional.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    step()
    print(f"step {i} loss {loss.item():.6f}")

from torch._dynamo.utils import counters  # noqa: E402

print(f"graph_breaks {sum(counters['graph_break'].values())}")
