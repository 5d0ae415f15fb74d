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
side_ops = 0  # the side thread's finished ops (one writer; the trainer reads)


def side_work():
    # Ops on a user thread while the window is armed.
    global side_ops
    while not stop.is_set():
        with torch.profiler.record_function("side work"):
            torch.ones(64, 64).mm(torch.ones(64, 64)).sum()
        side_ops += 1


def wait_for_a_side_op():
    # The side thread runs ops inside every step, whatever the machine's
    # load: the step waits until it finished one more (a 20 ms sleep here
    # left it to the scheduler, issue #39). At most 60 s.
    seen = side_ops
    deadline = time.monotonic() + 60
    while side_ops == seen and time.monotonic() < deadline:
        time.sleep(0.005)


def train():
    torch.manual_seed(0)
    model, opt = linear_sgd(16, 4)
    for step in range(steps):
        with torch.profiler.record_function(f"iteration {step}"):
            backward(model, opt, torch.randn(8, 16))
        opt.step()
        print(f"step {step}", flush=True)
        wait_for_a_side_op()


side = threading.Thread(target=side_work)
side.start()
trainer = threading.Thread(target=train, name="trainer")
trainer.start()
trainer.join()
stop.set()
side.join()
