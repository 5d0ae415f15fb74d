"""An unmodified mixed-precision loop with a GradScaler (on the CPU), whose
loss turns inf in chosen iterations: the scaler then skips optimizer.step().

  python grad_scaler.py ITERATIONS [--inf-from N] [--inf-at N]

From iteration N on, every step is skipped (the loss is multiplied by inf);
with --inf-at, only iteration N's is. Each iteration's forward is a user
annotation "iteration N".
"""
import argparse

import torch

parser = argparse.ArgumentParser()
parser.add_argument("iterations", type=int)
parser.add_argument("--inf-from", type=int, default=-1)
parser.add_argument("--inf-at", type=int, default=-1)
args = parser.parse_args()
torch.manual_seed(0)
torch.set_num_threads(1)
model = torch.nn.Linear(16, 4)
opt = torch.optim.SGD(model.parameters(), lr=0.05)
scaler = torch.amp.GradScaler("cpu")
x, y = torch.randn(8, 16), torch.randn(8, 4)
for it in range(args.iterations):
    with torch.profiler.record_function(f"iteration {it}"):
        loss = torch.nn.functional.mse_loss(model(x), y)
    if 0 <= args.inf_from <= it or it == args.inf_at:
        loss = loss * float("inf")
    opt.zero_grad()
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
    print(f"iteration {it} scale {scaler.get_scale()}", flush=True)
