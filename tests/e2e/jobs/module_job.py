"""A job whose model is made of named torch.nn.Modules: nothing of
chakrashim in it. Prints, at the start of each step, how many global module
forward hooks torch holds ("hooks S N"), and each step's loss ("loss S V"),
so that a test can see when CHAKRA_MODULE_SCOPES' hooks are in and that the
numbers did not change.

  python module_job.py STEPS [--thread] [--raise-at S] [--fork-at S] [--compile] [--wait-for-hooks]

--thread     another thread runs an Aux module's forward all along; each
             step waits until two of its calls ended in that step
--raise-at S at step S a submodule raises inside the forward; the job
             catches it and goes on
--fork-at S  at the start of step S the job forks a child that runs the
             model's forward three times, prints "child S HOOKS LOSS" and
             ends with os._exit(0); the parent prints "child exit CODE"
--compile    the model runs through torch.compile(backend="eager")
--wait-for-hooks  before training, wait (at most 60 s) until some global
             optimizer step hook is in: under the shim, chakrashim's, which
             it installs from a thread of its own a moment after torch's
             import; module scopes need them from the window's first step
"""
import argparse
import os
import threading
import time

import torch
import torch.nn.modules.module as module_impl


class Block(torch.nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc = torch.nn.Linear(dim, dim)
        self.act = torch.nn.ReLU()

    def forward(self, x):
        return self.act(self.fc(x))


class Fails(torch.nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.inner = torch.nn.Linear(dim, dim)

    def forward(self, x):
        self.inner(x)
        raise ValueError("a forward that fails, on purpose")


class Net(torch.nn.Module):
    def __init__(self, dim=16):
        super().__init__()
        self.encoder = torch.nn.Sequential(Block(dim), Block(dim))
        self.fails = Fails(dim)
        self.head = torch.nn.Linear(dim, 4)

    def forward(self, x, fail=False):
        h = self.encoder(x)
        if fail:
            try:
                self.fails(h)
            except ValueError:
                pass
        return self.head(h)


class Aux(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(8, 8)

    def forward(self, x):
        return self.proj(x).relu()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("steps", type=int)
    ap.add_argument("--thread", action="store_true")
    ap.add_argument("--raise-at", type=int, default=-1)
    ap.add_argument("--fork-at", type=int, default=-1)
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--wait-for-hooks", action="store_true")
    args = ap.parse_args()
    if args.wait_for_hooks:
        import torch.optim.optimizer as optimizer_impl
        deadline = time.monotonic() + 60
        while not optimizer_impl._global_optimizer_post_hooks and time.monotonic() < deadline:
            time.sleep(0.05)
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = Net()
    run = torch.compile(model, backend="eager") if args.compile else model
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    x, y = torch.randn(8, 16), torch.randn(8, 4)

    stop = threading.Event()
    calls = [0]  # the other thread's finished Aux calls
    if args.thread:
        aux, z = Aux(), torch.randn(4, 8)

        def other():
            with torch.no_grad():
                while not stop.is_set():
                    aux(z)
                    calls[0] += 1
        t = threading.Thread(target=other)
        t.start()
    for step in range(args.steps):
        hooks = len(module_impl._global_forward_hooks) + len(module_impl._global_forward_pre_hooks)
        print(f"hooks {step} {hooks}", flush=True)
        if step == args.fork_at:
            pid = os.fork()
            if pid == 0:
                with torch.no_grad():
                    for _ in range(3):
                        out = run(x)
                held = len(module_impl._global_forward_hooks) + len(module_impl._global_forward_pre_hooks)
                print(f"child {step} {held} {torch.nn.functional.mse_loss(out, y).item():.8f}", flush=True)
                os._exit(0)
            print(f"child exit {os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])}", flush=True)
        begun = calls[0]
        loss = torch.nn.functional.mse_loss(run(x, fail=step == args.raise_at), y)
        opt.zero_grad()
        loss.backward()
        # Two Aux calls finished in this step: the second began and ended
        # inside it, whatever the machine's load (the test needs one inside
        # the window, not a race for the GIL).
        while args.thread and calls[0] < begun + 2:
            time.sleep(0.001)
        opt.step()
        print(f"loss {step} {loss.item():.8f}", flush=True)
    if args.thread:
        stop.set()
        t.join()


if __name__ == "__main__":
    main()
