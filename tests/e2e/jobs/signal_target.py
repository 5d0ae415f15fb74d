"""A training loop that a test signals in mid-window.

  python signal_target.py STEPS [--handler before|after] [--block]

Prints "step N" (flushed) after each optimizer step so the test knows where
it is. --handler installs a Python SIGTERM handler that prints and exits 7,
before the window opens (at import) or after it opened (after step 3).
--block sleeps after step 4 without running any torch op, as a job waiting
on I/O would: the capture must still be finalized and the signal honoured.
"""
import signal
import sys
import time

import torch

steps = int(sys.argv[1])
handler_when = sys.argv[sys.argv.index("--handler") + 1] if "--handler" in sys.argv else None
block = "--block" in sys.argv


def on_term(sig, frame):
    print(f"handler got {sig}", flush=True)
    sys.exit(7)


if handler_when == "before":
    signal.signal(signal.SIGTERM, on_term)
torch.manual_seed(0)
model = torch.nn.Linear(16, 4)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(steps):
    loss = model(torch.randn(8, 16)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"step {step}", flush=True)
    if handler_when == "after" and step == 3:
        signal.signal(signal.SIGTERM, on_term)
    if block and step == 4:
        time.sleep(60)
    time.sleep(0.05)
print("finished", flush=True)
