"""The hand-over of step counting from chakrashim's RecordFunction callback
to torch.optim's step hooks, at the worst moment (issue #53): the first
optimizer step's record has taken its callbacks (ours among them) when the
hooks go in and our callback comes out. Under the marker-delay seam
(tests/support/marker_delay.cpp) that record waits half a second there,
with the GIL released; the hooks' registrar, which found no hook dict until
just before, puts the hooks in meanwhile. That step must count once.

  python hook_handover.py STEPS

Each iteration N runs inside a record "iteration N" (N from 0): a capture
of steps S..E holds iterations S..E exactly when every step counted once.
"""
import sys
import time

import torch
import torch.optim.optimizer as optimizer

steps = int(sys.argv[1])
torch.manual_seed(0)
model = torch.nn.Linear(8, 4)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(4, 8)

# No post-hook dict until the first step: chakrashim's registrar (started
# by the first zero_grad) finds none, and tries again every 250 ms.
post_hooks = optimizer._global_optimizer_post_hooks
optimizer._global_optimizer_post_hooks = None
for i in range(steps):
    with torch.profiler.record_function(f"iteration {i}"):
        loss = model(x).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        if i == 0:
            time.sleep(0.3)  # the registrar has tried, and found no dict
            optimizer._global_optimizer_post_hooks = post_hooks
        opt.step()
    print(f"step {i}", flush=True)
