"""A 2-layer MLP trained with DDP over gloo, about 1 ms a step on a CPU:
scripts/bench/bench_window_end.py times every step of it on every rank.

  RANK=R WORLD_SIZE=W MASTER_ADDR=127.0.0.1 MASTER_PORT=P \
      python ddp_steps.py STEPS TIMES_FILE

Writes each step's wall time (seconds, one a line; a step runs from the end
of the previous optimizer step to the end of its own, as chakrashim counts
it) to TIMES_FILE. Nothing of chakrashim is imported.
"""
import os
import sys
import time

import torch
import torch.distributed as dist


def main():
    steps, out = int(sys.argv[1]), sys.argv[2]
    # Before the process group exists (as tests/soak/soak_job.py says why): DDP
    # imports this lazily, and its defaults would then hold the group past
    # destroy_process_group(), leaving gloo's workers unjoined at exit (SIGABRT).
    import torch.distributed.nn.functional as _ddp_functional  # noqa: F401
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 16))
    ddp = torch.nn.parallel.DistributedDataParallel(model)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
    gen = torch.Generator().manual_seed(1000 + rank)
    x, y = torch.randn(32, 64, generator=gen), torch.randn(32, 16, generator=gen)
    times = []
    dist.barrier()
    last = time.perf_counter()
    for _ in range(steps):
        loss = torch.nn.functional.mse_loss(ddp(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        now = time.perf_counter()
        times.append(now - last)
        last = now
    dist.barrier()
    with open(out, "w") as f:
        f.write("\n".join(f"{t:.9f}" for t in times) + "\n")
    # The group's last reference goes in destroy_process_group(), which joins gloo's workers.
    ddp = model = opt = loss = None
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    sys.exit(main())
