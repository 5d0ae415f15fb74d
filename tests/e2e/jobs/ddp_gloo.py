"""An unmodified DDP training loop over gloo: nothing of chakrashim is imported.

  RANK=R WORLD_SIZE=W MASTER_ADDR=127.0.0.1 MASTER_PORT=P python ddp_gloo.py [STEPS [PACE_SECONDS]]

Each process reads its rank from the launcher variables (torchrun sets them;
tests set them by hand), joins a gloo process group, and trains a small model
wrapped in DistributedDataParallel, so every backward pass all-reduces the
gradients across the ranks. Prints "rank R step N loss L" for every step, so
runs with and without the shim can be compared. PACE_SECONDS (default 0)
pads each step with a sleep: a step of a known length, with the GIL free
while it sleeps, as in a job that waits for its GPU.
"""
import os
import time
import sys

import torch
import torch.distributed as dist

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 6
pace = float(sys.argv[2]) if len(sys.argv) > 2 else 0.0
# Before the process group exists (as tests/soak/soak_job.py says why): DDP
# imports this lazily, and its defaults would then hold the group past
# destroy_process_group(), leaving gloo's workers unjoined at exit (SIGABRT).
import torch.distributed.nn.functional  # noqa: F401
dist.init_process_group("gloo")
rank = dist.get_rank()
torch.manual_seed(0)
torch.set_num_threads(1)
model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 8))
ddp = torch.nn.parallel.DistributedDataParallel(model)
opt = torch.optim.SGD(ddp.parameters(), lr=0.05)
# Each rank trains on its own shard, as a DistributedSampler would give it.
gen = torch.Generator().manual_seed(1000 + rank)
x = torch.randn(16, 32, generator=gen)
y = torch.randn(16, 8, generator=gen)
for step in range(steps):
    loss = torch.nn.functional.mse_loss(ddp(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if pace:
        time.sleep(pace)
    print(f"rank {rank} step {step} loss {loss.item():.6f}", flush=True)
dist.barrier()
# The group's last reference goes in destroy_process_group(), which joins gloo's workers.
ddp = model = opt = loss = None
dist.destroy_process_group()
