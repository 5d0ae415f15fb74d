"""A two-stage pipeline over gloo on CPU (torch.distributed.pipelining),
for point-to-point ops end to end (issue #50).

  torchrun --nproc-per-node 2 pipeline_gloo.py [STEPS] [gpipe|1f1b] [MICROBATCHES]

Rank 0 runs Linear(16, 32) and ReLU, rank 1 Linear(32, 8) and the MSE loss;
the schedule sends activations forward and gradients back with c10d::send
and c10d::recv_, one message each way per micro-batch. One SGD step per
iteration; each rank prints its step (and the last stage its loss).
"""
import sys

import torch
import torch.distributed as dist
from torch.distributed.pipelining import PipelineStage, Schedule1F1B, ScheduleGPipe

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 5
schedule_name = sys.argv[2] if len(sys.argv) > 2 else "gpipe"
micro = int(sys.argv[3]) if len(sys.argv) > 3 else 4
dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
torch.set_num_threads(1)
torch.manual_seed(0)
whole = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 8))
mine = torch.nn.Sequential(whole[0], whole[1]) if rank == 0 else torch.nn.Sequential(whole[2])
stage = PipelineStage(mine, stage_index=rank, num_stages=world, device=torch.device("cpu"))
schedule_kind = {"gpipe": ScheduleGPipe, "1f1b": Schedule1F1B}[schedule_name]
schedule = schedule_kind(stage, n_microbatches=micro, loss_fn=torch.nn.MSELoss())
opt = torch.optim.SGD(mine.parameters(), lr=0.05)
g = torch.Generator().manual_seed(7)
x, y = torch.randn(16, 16, generator=g), torch.randn(16, 8, generator=g)
for step in range(steps):
    opt.zero_grad()
    if rank == 0:
        schedule.step(x)
        print(f"rank 0 step {step}", flush=True)
    else:
        losses = []
        schedule.step(target=y, losses=losses)
        print(f"rank 1 step {step} loss {torch.stack(losses).mean().item():.6f}", flush=True)
    opt.step()
dist.barrier()
dist.destroy_process_group()
