"""A plain training loop during which the wall clock is stepped: at the
start of step JUMP_AT the job moves CLOCK_REALTIME by SECONDS, through the
clock-jump seam (tests/support/clock_jump.c) when it is preloaded, as NTP
or an administrator would. Each step sleeps 5 ms outside any op, so that
steps have a length to measure. Nothing of chakrashim is imported.

  python clock_step.py STEPS JUMP_AT SECONDS
"""
import ctypes
import sys
import time

import torch

steps, jump_at, seconds = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
jump = getattr(ctypes.CDLL(None), "chakra_test_clock_jump", None)
jump.argtypes = [ctypes.c_double] if jump else None
torch.manual_seed(0)
model = torch.nn.Linear(16, 4)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn(8, 16)
for step in range(steps):
    if step == jump_at and jump:
        jump(seconds)
    time.sleep(0.005)
    loss = model(x).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
print("jumped" if jump else "no seam")
