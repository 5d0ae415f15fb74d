"""A small GAN-style training job: nothing of chakrashim in it.

Each iteration steps two optimizers, the discriminator's (SGD) and then the
generator's (Adam), as a GAN's loop does. chakrashim counts every optimizer
step as a step, so each iteration is two steps; the README's Configuration
section shows CHAKRA_STEP_MARKER counting iterations instead.

  python examples/train_gan.py [--steps N]
"""
import argparse

import torch


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=8, help="iterations")
    args = ap.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(1)
    gen = torch.nn.Sequential(torch.nn.Linear(8, 32), torch.nn.ReLU(), torch.nn.Linear(32, 16))
    disc = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.LeakyReLU(0.2), torch.nn.Linear(32, 1))
    opt_d = torch.optim.SGD(disc.parameters(), lr=0.01)
    opt_g = torch.optim.Adam(gen.parameters(), lr=1e-3)
    bce = torch.nn.BCEWithLogitsLoss()
    real_label, fake_label = torch.ones(32, 1), torch.zeros(32, 1)
    for it in range(args.steps):
        real = torch.randn(32, 16) + 1.0
        fake = gen(torch.randn(32, 8))
        d_loss = bce(disc(real), real_label) + bce(disc(fake.detach()), fake_label)
        opt_d.zero_grad()
        d_loss.backward()
        opt_d.step()
        g_loss = bce(disc(fake), real_label)
        opt_g.zero_grad()
        g_loss.backward()
        opt_g.step()
        print(f"iteration {it}: d_loss {d_loss.item():.4f} g_loss {g_loss.item():.4f}", flush=True)


if __name__ == "__main__":
    main()
