"""A DataLoader with two forked workers, re-created each epoch, so workers
are forked in the middle of the capture window."""
import sys

import torch
from torch.utils.data import DataLoader, TensorDataset

from tiny_training import linear_sgd, train_step

epochs = int(sys.argv[1]) if len(sys.argv) > 1 else 3
torch.manual_seed(0)
torch.set_num_threads(1)
data = TensorDataset(torch.randn(32, 8), torch.randn(32, 2))
model, opt = linear_sgd()
step = 0
for epoch in range(epochs):
    loader = DataLoader(data, batch_size=8, num_workers=2,
                        multiprocessing_context="fork", persistent_workers=False)
    for x, y in loader:
        train_step(model, opt, x, y)
        step += 1
    print(f"epoch {epoch} steps {step}")
