"""A job that forks, at step 2, a child that takes optimizer steps of its
own, then is sent SIGUSR2 by the parent (on-demand tests: a forked child
never looks for triggers, and the trigger signal does to it what it would
without chakrashim: USR2's default action ends it).

  python fork_stepper.py STEPS
"""
import os
import signal
import sys
import time

import torch

from tiny_training import linear_sgd, train_step

steps = int(sys.argv[1])
torch.manual_seed(0)
torch.set_num_threads(1)
model, opt = linear_sgd()


def step():
    train_step(model, opt, torch.randn(4, 8))


for n in range(steps):
    step()
    if n == 2:
        pid = os.fork()
        if pid == 0:
            for _ in range(5):
                step()
                time.sleep(0.3)  # long enough for a look, were it looking
            time.sleep(30)
            os._exit(0)
        time.sleep(2.0)
        os.kill(pid, signal.SIGUSR2)
        _, status = os.waitpid(pid, 0)
        how = ("SIGUSR2" if os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGUSR2
               else f"status {status}")
        print("child ended by", how, flush=True)
    print(f"step {n}", flush=True)
