"""Two optimizers per iteration (a GAN-like loop): both steps count."""
import sys

import torch

iterations = int(sys.argv[1]) if len(sys.argv) > 1 else 4
torch.manual_seed(0)
torch.set_num_threads(1)
gen = torch.nn.Linear(4, 4)
disc = torch.nn.Linear(4, 1)
opt_g = torch.optim.SGD(gen.parameters(), lr=0.01)
opt_d = torch.optim.Adam(disc.parameters(), lr=0.01)
for it in range(iterations):
    with torch.profiler.record_function(f"iteration {it}"):
        d_loss = disc(gen(torch.randn(2, 4)).detach()).mean()
        opt_d.zero_grad()
        d_loss.backward()
        opt_d.step()
        g_loss = -disc(gen(torch.randn(2, 4))).mean()
        opt_g.zero_grad()
        g_loss.backward()
        opt_g.step()
    print(f"iteration {it} done")
