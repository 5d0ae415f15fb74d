"""A job that ends with a capture window still open and a slow teardown:
an object of its module whose __del__ takes seconds, as a checkpoint
writer's or a logger's may. Nothing of chakrashim is imported.

  python slow_teardown.py STEPS [--sigint-handler] [--sigterm-handler]

Trains STEPS small steps, prints "training done", returns. Python then
runs its atexit callbacks, resets its signal handlers, and tears the module
down: the __del__ says "tearing down" on stderr (flushed), then sleeps 120 s
("teardown finished" after), which a Ctrl-C there cuts short. --sigint-handler / --sigterm-handler: the
job installs its own Python handler of that signal first (printing only).
"""
import signal
import sys
import time

import torch


class SlowTeardown:
    def __del__(self):
        sys.stderr.write("tearing down\n")
        sys.stderr.flush()
        time.sleep(120)
        sys.stderr.write("teardown finished\n")


def main():
    steps = int(sys.argv[1])
    if "--sigint-handler" in sys.argv:
        signal.signal(signal.SIGINT, lambda *_: print("the job's SIGINT handler", flush=True))
    if "--sigterm-handler" in sys.argv:
        signal.signal(signal.SIGTERM, lambda *_: print("the job's SIGTERM handler", flush=True))
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = torch.nn.Linear(8, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(4, 8)
    for _ in range(steps):
        loss = model(x).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    print("training done", flush=True)


keep = SlowTeardown()  # module global: deleted in Python's module teardown
if __name__ == "__main__":
    main()
