"""An optimizer step that an exception ends between its pre and post hooks:
torch.optim runs the global step pre hooks (chakrashim's), then the
optimizer's own; the job's own pre hook raises at iteration ABORT_AT, the
job catches it and trains on. That optimizer step never ran its post hooks
(as when the job's signal handler raises inside a step): it is no step, and
every later one must count (issue #48: a plain depth stayed one too high,
and no step was ever counted again).

  python aborted_step.py STEPS ABORT_AT

Each iteration N's forward and backward are a user annotation "iteration
N"; prints "steps S" at the end, the optimizer steps that completed.
"""
import sys

import torch

from tiny_training import backward, linear_sgd

steps, abort_at = int(sys.argv[1]), int(sys.argv[2])
torch.manual_seed(0)
model, opt = linear_sgd(16, 4)
x = torch.randn(8, 16)
iteration = [0]


def abort_once(optimizer, args, kwargs):
    if iteration[0] == abort_at:
        raise RuntimeError("an optimizer step ended by an exception, on purpose")


opt.register_step_pre_hook(abort_once)
completed = 0
for step in range(steps):
    iteration[0] = step
    with torch.profiler.record_function(f"iteration {step}"):
        backward(model, opt, x)
    try:
        opt.step()
        completed += 1
    except RuntimeError:
        pass
print(f"steps {completed}")
