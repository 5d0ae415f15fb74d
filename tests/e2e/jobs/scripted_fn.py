"""A training loop whose forward pass calls TorchScript functions, as
Megatron and NeMo do for their fused bias-GELU and bias-dropout-add: torch
raises a TORCHSCRIPT_FUNCTION record for each call, which chakrashim's op
callback must observe (shim/src/bridge/record_scopes.h) for the native ET
to hold what torch's observer holds. Nothing of chakrashim is imported.

  python scripted_fn.py [STEPS]
"""
import sys

import torch

from tiny_training import train_step

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 5
torch.manual_seed(0)
torch.set_num_threads(1)
torch.use_deterministic_algorithms(True)


@torch.jit.script
def bias_gelu(bias: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    x = bias + y
    return x * 0.5 * (1.0 + torch.tanh(0.79788456 * x * (1 + 0.044715 * x * x)))


class Mlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(16, 32, bias=False)
        self.bias = torch.nn.Parameter(torch.zeros(32))
        self.fc2 = torch.nn.Linear(32, 4)

    def forward(self, x):
        return self.fc2(bias_gelu(self.bias, self.fc1(x)))


model = Mlp()
opt = torch.optim.SGD(model.parameters(), lr=0.05)
x = torch.randn(8, 16)
y = torch.randn(8, 4)
for step in range(steps):
    loss = train_step(model, opt, x, y)
    print(f"step {step} loss {loss.item():.6f}")
