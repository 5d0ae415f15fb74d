"""Gradient accumulation: one optimizer step per 4 micro-batches."""
import sys

import torch

iterations = int(sys.argv[1]) if len(sys.argv) > 1 else 5
torch.manual_seed(0)
torch.set_num_threads(1)
model = torch.nn.Linear(8, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for it in range(iterations):
    for micro in range(4):
        with torch.profiler.record_function(f"micro {it}.{micro}"):
            loss = model(torch.randn(4, 8)).pow(2).mean() / 4
        loss.backward()
    opt.step()
    opt.zero_grad()
    print(f"iteration {it} done")
