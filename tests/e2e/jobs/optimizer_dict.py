"""Trains a few steps, then says whether the optimizer's instance dict was
made: CPython 3.11 keeps a plain object's attributes inline until something
asks for its __dict__, and from then on every attribute load on it (torch's
step reads self.param_groups, self.state, ... each step) takes a slower
path. The shim reads the optimizer's param_groups at each step of the
job's first ones; it must read them without making that dict (issue #52).

  python optimizer_dict.py STEPS

Prints "instance dict made: BOOL", judged from gc.get_referents (which
does not make it): False where the attributes are still inline.
"""
import gc
import sys

import torch

from tiny_training import linear_sgd, train_step

steps = int(sys.argv[1])
torch.manual_seed(0)
model, opt = linear_sgd(16, 4)
x = torch.randn(8, 16)
for _ in range(steps):
    train_step(model, opt, x)
made = any(type(r) is dict and "param_groups" in r for r in gc.get_referents(opt))
print(f"steps {steps} instance dict made: {made}")
