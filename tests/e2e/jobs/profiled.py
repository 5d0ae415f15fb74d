"""A job that runs its own torch.profiler over steps FROM..TO (CPU
activity; 1..5 by default): chakrashim must leave CUPTI to it, also when it
starts inside the capture window.

  python profiled.py [STEPS [FROM TO [THEN]]]

THEN acts right after the profiler started, before that step's first op
(so before the window's next step boundary could notice the profiler):
  sigterm  sends the job SIGTERM; its own handler (installed before torch)
           stops the profiler (torch crashes at exit with one still
           running, with or without chakrashim), prints "job got SIGTERM"
           and exits 7;
  burst    runs 10000 small ops at once, to reach a small CHAKRA_MAX_MEMORY
           inside that step; the job then goes on.
"""
import os
import signal
import sys

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 8
start, stop = (int(sys.argv[2]), int(sys.argv[3])) if len(sys.argv) > 3 else (1, 5)
then = sys.argv[4] if len(sys.argv) > 4 else None
prof = None


def on_term(sig, frame):
    if prof is not None:
        prof.__exit__(None, None, None)
    print("job got SIGTERM", flush=True)
    sys.exit(7)


if then == "sigterm":
    signal.signal(signal.SIGTERM, on_term)

import torch  # noqa: E402
from torch.profiler import ProfilerActivity, profile  # noqa: E402

torch.manual_seed(0)
model = torch.nn.Linear(16, 4)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(steps):
    if step == start:
        prof = profile(activities=[ProfilerActivity.CPU])
        prof.__enter__()
        if then == "sigterm":
            os.kill(os.getpid(), signal.SIGTERM)
        elif then == "burst":
            x = torch.zeros(4)
            for _ in range(10000):
                x.add_(1)
    loss = model(torch.randn(8, 16)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step == stop and prof is not None:
        prof.__exit__(None, None, None)
        print(f"profiler saw {len(prof.events()) > 0}")
    print(f"step {step} loss {loss.item():.6f}")
