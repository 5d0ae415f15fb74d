"""A one-rank gloo job whose stepping thread has to wait for the GIL at the
start of the window: from step 1 on, a Python thread spins and the switch
interval is long, so every GIL hand-over takes up to that long.
chakrashim used to ask torch.distributed (through Python) on the stepping
thread at the first active step; a SIGTERM landing while that question
waited for the GIL deadlocked our own lock, and the job never died.

  MASTER_ADDR=127.0.0.1 MASTER_PORT=P python ddp_signal.py STEPS [SWITCH_INTERVAL]

Prints "before step N" before each optimizer step and "step N" after it.
"""
import os
import sys
import threading

import torch
import torch.distributed as dist

steps = int(sys.argv[1])
interval = float(sys.argv[2]) if len(sys.argv) > 2 else 0.2
os.environ.setdefault("RANK", "0")
os.environ.setdefault("WORLD_SIZE", "1")
dist.init_process_group("gloo")


def spin():
    while True:
        sum(range(1000))


torch.manual_seed(0)
model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(16, 4))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(steps):
    loss = model(torch.randn(8, 16)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    if step == 1:
        sys.setswitchinterval(interval)
        threading.Thread(target=spin, daemon=True).start()
    print(f"before step {step}", flush=True)
    opt.step()
    print(f"step {step}", flush=True)
print("finished", flush=True)
