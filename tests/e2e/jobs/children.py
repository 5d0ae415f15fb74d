"""Starts children in the middle of the capture window.

  python children.py spawn_loader|subprocess|fork_pool|fork_sigterm

At step 3 (inside a window of steps 2-5): spawn_loader iterates a DataLoader
with two spawned workers; subprocess runs a Python child that imports torch
and runs ops; fork_pool maps over a fork-based multiprocessing pool whose
workers run ops; fork_sigterm forks a child that sleeps and terminates it
with SIGTERM, as multiprocessing's Pool.terminate does. Prints the
children's results so the test can see they ran.
"""
import multiprocessing
import subprocess
import sys

import torch
from torch.utils.data import DataLoader, TensorDataset

from tiny_training import linear_sgd, train_step


def work(n):
    return float(torch.arange(float(n)).sum() + torch.ones(3).mul(2).sum())


def main():
    mode = sys.argv[1]
    torch.manual_seed(0)
    model, opt = linear_sgd()
    for step in range(8):
        train_step(model, opt, torch.randn(4, 8))
        if step == 3:
            if mode == "spawn_loader":
                data = TensorDataset(torch.randn(16, 8))
                loader = DataLoader(data, batch_size=4, num_workers=2,
                                    multiprocessing_context="spawn")
                print("loader batches", sum(1 for _ in loader), flush=True)
            elif mode == "subprocess":
                r = subprocess.run([sys.executable, "-c",
                                    "import torch; print(float(torch.ones(4).mul(3).sum()))"],
                                   capture_output=True, text=True)
                print("child said", r.stdout.strip(), "rc", r.returncode, flush=True)
                sys.stderr.write(r.stderr)
            elif mode == "fork_sigterm":
                import os, signal, time
                pid = os.fork()
                if pid == 0:
                    time.sleep(30)
                    os._exit(0)
                time.sleep(0.2)
                os.kill(pid, signal.SIGTERM)
                t0 = time.monotonic()
                while time.monotonic() - t0 < 10:
                    done, status = os.waitpid(pid, os.WNOHANG)
                    if done:
                        break
                    time.sleep(0.05)
                else:
                    os.kill(pid, signal.SIGKILL)
                    os.waitpid(pid, 0)
                    status = -1
                print("child ended by", "SIGTERM" if os.WIFSIGNALED(status) and
                      os.WTERMSIG(status) == signal.SIGTERM else f"status {status}", flush=True)
            elif mode == "fork_pool":
                with multiprocessing.get_context("fork").Pool(2) as pool:
                    print("pool results", pool.map(work, [3, 4, 5]), flush=True)
        print(f"step {step}", flush=True)


if __name__ == "__main__":
    main()
