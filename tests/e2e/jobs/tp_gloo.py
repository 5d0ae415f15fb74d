"""An unmodified tensor-parallel training loop over gloo (DTensor,
parallelize_module): nothing of chakrashim is imported.

  RANK=R WORLD_SIZE=W MASTER_ADDR=127.0.0.1 MASTER_PORT=P python tp_gloo.py [STEPS [--dp]]

A two-layer MLP split Megatron-style across the ranks (the first layer by
columns, the second by rows): each forward ends in an all-reduce of the
second layer's partial outputs, each backward in one of the input's
gradient. With --dp on 4 ranks, a 2x2 mesh: tensor parallel inside each
pair, data parallel (a gradient all-reduce per parameter) across them.
Prints "rank R step N loss L" for every step.
"""
import os
import sys

import torch
import torch.distributed as dist

steps = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 6
dp = "--dp" in sys.argv
import torch.distributed.nn.functional  # noqa: F401  (see ddp_gloo.py)
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module

dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
torch.manual_seed(0)
torch.set_num_threads(1)
if dp:
    mesh = init_device_mesh("cpu", (world // 2, 2), mesh_dim_names=("dp", "tp"))
    tp_mesh, dp_group = mesh["tp"], mesh["dp"].get_group()
else:
    tp_mesh, dp_group = init_device_mesh("cpu", (world,), mesh_dim_names=("tp",)), None
model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 8))
model = parallelize_module(model, tp_mesh, {"0": ColwiseParallel(), "2": RowwiseParallel()})
opt = torch.optim.SGD(model.parameters(), lr=0.05)
gen = torch.Generator().manual_seed(1000 + (rank // 2 if dp else 0))
x = torch.randn(16, 32, generator=gen)
y = torch.randn(16, 8, generator=gen)
for step in range(steps):
    loss = torch.nn.functional.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    if dp_group is not None:
        for p in model.parameters():
            g = p.grad.to_local() if hasattr(p.grad, "to_local") else p.grad
            dist.all_reduce(g, group=dp_group)
            g /= world // 2
    opt.step()
    print(f"rank {rank} step {step} loss {loss.item():.6f}", flush=True)
# As ddp_gloo.py: every rank's last collective done, and the group's last
# references (the DTensor parameters' mesh) gone before destroy_process_group()
# joins gloo's workers; a rank once aborted at exit ("terminate called
# without an active exception") with them held.
dist.barrier()
model = opt = loss = tp_mesh = dp_group = None
if dp:
    mesh = None
dist.destroy_process_group()
