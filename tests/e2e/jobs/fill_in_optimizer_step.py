"""CHAKRA_MAX_MEMORY filled inside one step's Optimizer.step record, after
the stepping thread's last op began: a user thread runs the ops that fill
it while the trainer waits, with no op of its own, until the record ends.

  python fill_in_optimizer_step.py STEPS FILL_STEP [FILL_OPS]

The trainer's next op start, where the stepping thread looks at the budget,
comes only after that step's boundary: the order a slow decode thread gave
the CI machine by chance (issue #39), here by construction.
"""
import sys
import threading

import torch

from tiny_training import backward

steps = int(sys.argv[1])
fill_step = int(sys.argv[2])
fill_ops = int(sys.argv[3]) if len(sys.argv) > 3 else 30000
torch.set_num_threads(1)


def fill():
    a, b = torch.ones(4), torch.ones(4)
    for _ in range(fill_ops):
        torch.add(a, b)


class FillingSGD(torch.optim.SGD):
    step_number = 0

    def step(self, closure=None):
        # torch wraps a subclass's step too: this runs inside its
        # "Optimizer.step#FillingSGD.step" record.
        loss = super().step(closure)
        if FillingSGD.step_number == fill_step:
            t = threading.Thread(target=fill)
            t.start()
            t.join()
        FillingSGD.step_number += 1
        return loss


torch.manual_seed(0)
model = torch.nn.Linear(8, 2)
opt = FillingSGD(model.parameters(), lr=0.01)
for step in range(steps):
    backward(model, opt, torch.randn(4, 8))
    opt.step()
print(f"trained {steps} steps", flush=True)
