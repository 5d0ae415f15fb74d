"""An unmodified DDP training script over gloo, as users run it under any
launcher: torchrun sets RANK/WORLD_SIZE; under mpirun or srun the script
takes its rank from the launcher's environment, the usual way.

  python train_ddp.py [STEPS] [--fail-once MARKER] [--report-bridge] [--no-process-group]

--fail-once MARKER: rank 0 raises after step 1 unless the file MARKER
exists (and creates it), so a torchelastic restart succeeds the second time.
--report-bridge: print whether chakrashim's torch bridge is loaded here.
--no-process-group: each rank trains alone, without gloo (for tests about the
launcher, where gloo's own reconnection after a restart would add flakiness).
"""
import os
import sys

import torch
import torch.distributed as dist


def launcher_rank():
    for rank_var, size_var in (("RANK", "WORLD_SIZE"),
                               ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"),
                               ("PMI_RANK", "PMI_SIZE"),
                               ("SLURM_PROCID", "SLURM_NTASKS")):
        if rank_var in os.environ:
            return int(os.environ[rank_var]), int(os.environ[size_var])
    return 0, 1


def main():
    steps = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 6
    fail_marker = sys.argv[sys.argv.index("--fail-once") + 1] if "--fail-once" in sys.argv else None
    rank, world = launcher_rank()
    distributed = "--no-process-group" not in sys.argv
    if distributed:
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ.setdefault("MASTER_PORT", "29511")
        # Before the process group exists (as tests/soak/soak_job.py says why): DDP
        # imports this lazily, and its defaults would then hold the group past
        # destroy_process_group(), leaving gloo's workers unjoined at exit (SIGABRT).
        import torch.distributed.nn.functional as _ddp_functional  # noqa: F401
        dist.init_process_group("gloo", rank=rank, world_size=world)
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 8))
    if distributed:
        model = torch.nn.parallel.DistributedDataParallel(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    gen = torch.Generator().manual_seed(1000 + rank)
    x, y = torch.randn(16, 32, generator=gen), torch.randn(16, 8, generator=gen)
    for step in range(steps):
        loss = torch.nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(f"rank {rank} step {step} loss {loss.item():.6f}", flush=True)
        if fail_marker and rank == 0 and step == 1 and not os.path.exists(fail_marker):
            open(fail_marker, "w").close()
            raise RuntimeError("failing once, before the window, to be restarted")
    if "--report-bridge" in sys.argv:
        with open("/proc/self/maps") as f:
            loaded = any("libchakrashim_torch.so" in line for line in f)
        print(f"rank {rank} bridge {loaded}", flush=True)
    if distributed:
        dist.barrier()
        # The group's last reference goes in destroy_process_group(), which joins gloo's workers.
        model = opt = loss = None
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
