"""An unmodified training loop that takes a set time a step, for tests that
act on a running job (on-demand capture: a trigger from outside, a signal).

  python paced_loop.py STEPS [--step-ms MS] [--signal-at STEP:SIG ...]
                             [--stop-file PATH] [--ddp]
                             [--child-at STEP] [--count-stdin]

--signal-at sends SIG (a name: USR1, USR2, TERM) to the job itself at the end
of STEP. --stop-file ends the loop early, after the step in which the file
appeared (the test ends a job it triggered). --ddp runs under torchrun with
the gloo backend: every rank steps together. --child-at runs, at the end of
STEP, a child that trains a few steps under the same environment (as a job
that launches a training subprocess does) and waits for it. --count-stdin
reads the job's standard input at its end and prints how many lines came
(a test's check that nobody else read them). Prints each step's loss, so that
runs with and without the shim compare byte for byte.
"""
import argparse
import os
import signal
import time

import torch

parser = argparse.ArgumentParser()
parser.add_argument("steps", type=int)
parser.add_argument("--step-ms", type=float, default=20.0)
parser.add_argument("--signal-at", action="append", default=[])
parser.add_argument("--stop-file")
parser.add_argument("--ddp", action="store_true")
parser.add_argument("--child-at", type=int)
parser.add_argument("--count-stdin", action="store_true")
args = parser.parse_args()
signals_at = {}
for item in args.signal_at:
    step, name = item.split(":")
    signals_at.setdefault(int(step), []).append(getattr(signal, "SIG" + name))

torch.manual_seed(0)
torch.set_num_threads(1)
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
if args.ddp:
    import torch.distributed as dist
    # Before the process group exists (as tests/soak/soak_job.py says why): DDP
    # imports this lazily, and its defaults would then hold the group past
    # destroy_process_group(), leaving gloo's workers unjoined at exit (SIGABRT).
    import torch.distributed.nn.functional  # noqa: F401
    dist.init_process_group("gloo")
    model = torch.nn.parallel.DistributedDataParallel(model)
opt = torch.optim.SGD(model.parameters(), lr=0.05)
x = torch.randn(8, 16)
y = torch.randn(8, 4)
for step in range(args.steps):
    began = time.monotonic()
    loss = torch.nn.functional.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.6f}", flush=True)
    if step == args.child_at:
        import subprocess
        import sys
        child = subprocess.run([sys.executable, os.path.join(os.path.dirname(__file__),
                                                             "plain_loop.py"), "6"],
                               stdout=subprocess.DEVNULL)
        print(f"child exited {child.returncode}", flush=True)
    for sig in signals_at.get(step, []):
        os.kill(os.getpid(), sig)
    stop = args.stop_file and os.path.exists(args.stop_file)
    if args.ddp:
        # Every rank stops at the same step: rank 0 decides.
        flag = torch.tensor([1 if stop else 0])
        dist.broadcast(flag, 0)
        stop = bool(flag.item())
    if stop:
        break
    left = args.step_ms / 1000.0 - (time.monotonic() - began)
    if left > 0:
        time.sleep(left)
if args.ddp:
    # The group's last reference goes in destroy_process_group(), which joins gloo's workers.
    model = opt = loss = None
    dist.destroy_process_group()
if args.count_stdin:
    import sys
    print(f"stdin lines {sum(1 for _ in sys.stdin)}", flush=True)
