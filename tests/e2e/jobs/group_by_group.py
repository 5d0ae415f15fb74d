"""An optimizer stepped once per parameter group by a wrapper that is no
torch optimizer, as DeepSpeed's ZeRO optimizers do (issue #54): each
iteration takes two AdamW steps. Nothing of chakrashim in it.

  python group_by_group.py ITERATIONS [--plain]

--plain steps the AdamW once, with both groups (the control)."""
import sys

import torch

iterations = int(sys.argv[1]) if len(sys.argv) > 1 else 6
plain = "--plain" in sys.argv
torch.manual_seed(0)
torch.set_num_threads(1)
model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.LayerNorm(8), torch.nn.Linear(8, 2))
decay = [p for p in model.parameters() if p.dim() > 1]
no_decay = [p for p in model.parameters() if p.dim() <= 1]
opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01}, {"params": no_decay, "weight_decay": 0.0}])


class GroupByGroup:
    """Not a torch.optim.Optimizer: steps the inner one a group at a time."""

    def __init__(self, inner):
        self.inner = inner

    def step(self):
        groups = self.inner.param_groups
        for group in groups:
            self.inner.param_groups = [group]
            self.inner.step()
        self.inner.param_groups = groups


stepper = opt if plain else GroupByGroup(opt)
for it in range(iterations):
    loss = model(torch.randn(4, 8)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    stepper.step()
    print(f"iteration {it} loss {loss.item():.6f}", flush=True)
