"""A job with a DataLoader of two spawned workers whose last iterator is
still alive when the job exits (its epoch not finished): multiprocessing's
exit handler then terminates the workers (SIGTERM), and torch's handler in
each worker ends it with _exit(0), running no exit handler of the worker's.
Nothing of chakrashim is imported.

  python spawn_loader_workers.py STEPS
"""
import sys

import torch
from torch.utils.data import DataLoader, TensorDataset


def main():
    steps = int(sys.argv[1])
    torch.manual_seed(0)
    torch.set_num_threads(1)
    data = TensorDataset(torch.randn(64, 8), torch.randn(64, 2))
    loader = DataLoader(data, batch_size=4, num_workers=2, multiprocessing_context="spawn")
    model = torch.nn.Linear(8, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    batches = iter(loader)  # 16 batches: the epoch is left unfinished
    for step in range(steps):
        x, y = next(batches)
        loss = torch.nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(f"step {step} loss {loss.item():.6f}", flush=True)
    return batches  # kept alive to the end: its workers too


if __name__ == "__main__":
    kept = main()
