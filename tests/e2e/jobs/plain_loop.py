"""An unmodified training loop: nothing of chakrashim is imported.

  python plain_loop.py [STEPS] [--annotate] [--wrap] [--eval-after] [--slower-from N]

With --annotate, each iteration opens a user annotation "iteration N" at the
start of step N (the test checks that it lies inside ProfilerStep#N). With
--wrap, a record_function "train_step" holds the whole iteration, optimizer
step included: it ends just after the step it holds ends. With --eval-after,
the job evaluates the model after training (no_grad forward passes) and
saves it with torch.save, as training scripts do: ops after the last step.
With --slower-from N, steps from N on also spend 30 ms in Python (a job
whose steps change, as with a growing batch or an eval folded in).
Prints the loss of every step so that runs with and without the shim can be
compared byte for byte.
"""
import sys

import torch

steps = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 6
annotate = "--annotate" in sys.argv
wrap = "--wrap" in sys.argv
eval_after = "--eval-after" in sys.argv
slower_from = int(sys.argv[sys.argv.index("--slower-from") + 1]) if "--slower-from" in sys.argv else None
torch.manual_seed(0)
torch.set_num_threads(1)
torch.use_deterministic_algorithms(True)
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
opt = torch.optim.SGD(model.parameters(), lr=0.05)
x = torch.randn(8, 16)
y = torch.randn(8, 4)

def iteration(step):
    if annotate:
        with torch.profiler.record_function(f"iteration {step}"):
            loss = torch.nn.functional.mse_loss(model(x), y)
    else:
        loss = torch.nn.functional.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss


for step in range(steps):
    if slower_from is not None and step >= slower_from:
        import time
        time.sleep(0.03)
    if wrap:
        with torch.profiler.record_function("train_step"):
            loss = iteration(step)
    else:
        loss = iteration(step)
    print(f"step {step} loss {loss.item():.6f}")
if eval_after:
    import io
    with torch.no_grad():
        for _ in range(20):
            model(x)
    torch.save(model.state_dict(), io.BytesIO())
    print("evaluated")
