"""An optimizer subclass whose step() calls super().step(): one step each.

  python nested_step.py [ITERATIONS [ABORT_INNER_AT]]

With ABORT_INNER_AT, the inner step of that iteration (super().step()) is
ended by an exception after chakrashim's pre hook ran in it (a pre hook of
the job's raises there); ClippedSGD.step catches it, and the outer step
ends as usual: one step still, and every later one counts (the inner step
never ran its post hooks, so a plain count of open steps stays one too
high).
"""
import sys

import torch

from tiny_training import backward


iterations = int(sys.argv[1]) if len(sys.argv) > 1 else 6
abort_inner_at = int(sys.argv[2]) if len(sys.argv) > 2 else -1
inner = [False]  # the next pre hook runs in the inner step


class ClippedSGD(torch.optim.SGD):
    def step(self, closure=None):
        for group in self.param_groups:
            torch.nn.utils.clip_grad_norm_(group["params"], 1.0)
        inner[0] = it == abort_inner_at
        try:
            return super().step(closure)
        except RuntimeError:
            return None
        finally:
            inner[0] = False


def abort_inner(optimizer, args, kwargs):
    if inner[0]:
        raise RuntimeError("the inner optimizer step ended by an exception, on purpose")


torch.manual_seed(0)
torch.set_num_threads(1)
# A plain SGD is created too, so that both classes' step() are wrapped by
# torch's profiling hook and the markers really nest.
plain = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)
model = torch.nn.Linear(8, 2)
opt = ClippedSGD(model.parameters(), lr=0.01)
opt.register_step_pre_hook(abort_inner)
for it in range(iterations):
    with torch.profiler.record_function(f"iteration {it}"):
        backward(model, opt, torch.randn(4, 8))
    opt.step()
    print(f"iteration {it} done")
