"""An optimizer subclass whose step() calls super().step(): one step each."""
import sys

import torch

from tiny_training import backward


class ClippedSGD(torch.optim.SGD):
    def step(self, closure=None):
        for group in self.param_groups:
            torch.nn.utils.clip_grad_norm_(group["params"], 1.0)
        return super().step(closure)


iterations = int(sys.argv[1]) if len(sys.argv) > 1 else 6
torch.manual_seed(0)
torch.set_num_threads(1)
# A plain SGD is created too, so that both classes' step() are wrapped by
# torch's profiling hook and the markers really nest.
plain = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)
model = torch.nn.Linear(8, 2)
opt = ClippedSGD(model.parameters(), lr=0.01)
for it in range(iterations):
    with torch.profiler.record_function(f"iteration {it}"):
        backward(model, opt, torch.randn(4, 8))
    opt.step()
    print(f"iteration {it} done")
