"""DataLoader workers forked every epoch while a background thread runs ops
the whole time: a fork can land while that thread is inside an ET callback
(holding torch's observer mutex). A worker must never block on it.

  python fork_with_thread.py EPOCHS

Each epoch re-creates a 2-worker fork DataLoader with a timeout, so a worker
stuck at its first op makes the job fail with "DataLoader timed out" (300 s:
a worker's first batch beside a spinning thread on a loaded machine must
never reach it, issue #39; the tests' own 600 s bound comes after).

The thread runs ops from before each epoch's workers are forked until both
are (every fork lands while it runs them, as when it ran them all the
time), and waits otherwise: spinning through the rest of each
epoch (the workers' shutdown, the steps) only recorded ops that no fork
could meet, 972k of them (a 945 MB ET to write and check, issue #53).
"""
import sys
import threading
import time

import torch
from torch.utils.data import DataLoader, TensorDataset

from tiny_training import linear_sgd, train_step

epochs = int(sys.argv[1]) if len(sys.argv) > 1 else 50
torch.manual_seed(0)
torch.set_num_threads(1)
stop = threading.Event()
busy = threading.Event()  # set while the workers are forked and start
loops = [0]  # the thread's loops of ops, for the main thread to see it run


def side_work():
    a = torch.ones(32, 32)
    while not stop.is_set():
        if not busy.is_set():
            busy.wait(0.01)
            continue
        a = (a @ a).clamp_(max=1.0)  # several ops per loop, each an ET node
        loops[0] += 1


side = threading.Thread(target=side_work, daemon=True)
side.start()


class Data(TensorDataset):
    def __getitem__(self, i):
        x, y = super().__getitem__(i)
        return x * 2, y  # an op in the worker, at its first item


data = Data(torch.randn(16, 8), torch.randn(16, 2))
model, opt = linear_sgd()
steps = 0
for epoch in range(epochs):
    loader = DataLoader(data, batch_size=8, num_workers=2, multiprocessing_context="fork",
                        persistent_workers=False, timeout=300)
    busy.set()
    seen = loops[0]
    while loops[0] < seen + 2:  # the thread is in its loop of ops
        if not side.is_alive():
            sys.exit("the side thread died: no fork would meet its ops")
        time.sleep(0.0005)
    batches = iter(loader)  # forks both workers while the thread runs ops
    busy.clear()
    for x, y in batches:
        train_step(model, opt, x, y)
        steps += 1
stop.set()  # seen within 10 ms: the thread's wait for `busy` times out
side.join()
print(f"done {epochs} epochs {steps} steps")
