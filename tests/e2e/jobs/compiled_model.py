"""A torch.compile'd model (inductor on the CPU) in a plain training loop:
nothing of chakrashim is imported.

  python compiled_model.py [STEPS]
"""
import sys
import torch
steps = int(sys.argv[1]) if len(sys.argv) > 1 else 6
torch.manual_seed(0)
torch.set_num_threads(1)
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
cmodel = torch.compile(model)
opt = torch.optim.SGD(model.parameters(), lr=0.05)
x = torch.randn(8, 16)
y = torch.randn(8, 4)
for step in range(steps):
    loss = torch.nn.functional.mse_loss(cmodel(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.6f}")
