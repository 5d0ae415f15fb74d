"""A side thread fills CHAKRA_MAX_MEMORY while the stepping thread sleeps;
the stepping thread then forks a child that runs torch ops. The window must
be cut by the parent at its next op, never by the child (which would stop
CUPTI and publish the parent's files from the wrong process).

  python cut_then_fork.py STEPS
"""
import os
import sys
import threading

import torch

steps = int(sys.argv[1])
torch.manual_seed(0)
model = torch.nn.Linear(16, 4)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
fill = threading.Event()
filled = threading.Event()


def side():
    fill.wait()
    a = torch.ones(4)
    for _ in range(30000):  # well past the cap's spans
        a = a + 1
    filled.set()


# Joined before exit: a daemon thread still inside a torch op when CPython
# finalizes is ended by pthread_exit, whose unwinding through torch's
# noexcept binding aborts the process (torch and CPython 3.11, with or
# without chakrashim).
side_thread = threading.Thread(target=side)
side_thread.start()
for step in range(steps):
    loss = model(torch.randn(8, 16)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step == 3:
        fill.set()
        # The side thread hits the cap; no op on this thread meanwhile. Waited
        # for, not slept: under TSan its 30000 ops take several seconds.
        filled.wait()
        pid = os.fork()
        if pid == 0:
            torch.ones(3).sum()  # the child's first ops
            torch.ones(3).mul(2)
            os._exit(0)
        os.waitpid(pid, 0)
    print(f"step {step}", flush=True)
side_thread.join()
print("finished", flush=True)
