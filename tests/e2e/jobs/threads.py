"""Training on a thread other than the main one, with a second user thread
running ops at the same time.

  python threads.py [STEPS]
"""
import sys
import threading
import time

import torch

from tiny_training import backward, linear_sgd

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 6
torch.set_num_threads(1)
stop = threading.Event()


def side_work():
    # Ops on a user thread while the window is armed.
    while not stop.is_set():
        with torch.profiler.record_function("side work"):
            torch.ones(64, 64).mm(torch.ones(64, 64)).sum()


def train():
    torch.manual_seed(0)
    model, opt = linear_sgd(16, 4)
    for step in range(steps):
        with torch.profiler.record_function(f"iteration {step}"):
            backward(model, opt, torch.randn(8, 16))
        opt.step()
        print(f"step {step}", flush=True)
        time.sleep(0.02)  # lets the side thread run inside every step


side = threading.Thread(target=side_work)
side.start()
trainer = threading.Thread(target=train, name="trainer")
trainer.start()
trainer.join()
stop.set()
side.join()
