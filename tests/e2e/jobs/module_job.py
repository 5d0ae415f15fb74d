"""A job whose model is made of named torch.nn.Modules: nothing of
chakrashim in it. Prints, at the start of each step, how many global module
forward hooks torch holds ("hooks S N"), and each step's loss ("loss S V"),
so that a test can see when CHAKRA_MODULE_SCOPES' hooks are in and that the
numbers did not change.

  python module_job.py STEPS [--thread] [--raise-at S] [--fork-at S] [--compile]
                       [--compile-at S [--fullgraph]] [--unhashable] [--ticks] [--wait-for-hooks]
                       [--ordered-modules]

--thread     another thread runs an Aux module's forward all along; each
             step waits until two of its calls ended in that step
--raise-at S at step S a submodule raises inside the forward; the job
             catches it and goes on
--fork-at S  at the start of step S the job forks a child that runs the
             model's forward three times, prints "child S HOOKS LOSS" and
             ends with os._exit(0); the parent prints "child exit CODE"
--compile    the model runs through torch.compile(backend="eager")
--compile-at S  from step S on, the model's encoder runs through
             torch.compile(backend="eager"), compiled then for the first
             time (with --fullgraph, fullgraph=True)
--unhashable each forward also calls a module of a class that defines
             __eq__ and sets __hash__ = None (as a dataclass does), kept
             outside the model's tree (nn.Module's own named_modules()
             hashes every module of a tree), at the root and inside Net
--ticks      a SIGALRM handler raises Tick every 3 ms, but only while this
             file's own code or chakrashim's Python runs (never inside
             torch's or the standard library's); the loop catches each and
             goes on until STEPS optimizer steps completed, then prints
             "raised R caught C ours O" (R must equal C; O of them were
             raised in chakrashim's Python)
--ordered-modules  every module's _modules is an OrderedDict, as torch
             before 2.5 made them
--wait-for-hooks  before training, call the optimizer's zero_grad() and
             wait (at most 60 s) until some global optimizer step hook is
             in: under the shim, chakrashim's, which it installs from a
             thread of its own once the job shows it trains (an optimizer
             record); module scopes need them from the window's first step
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
        # Called, not registered (see --unhashable).
        for m in self.__dict__.get("unhashable", ()):
            h = m(h)
        if fail:
            try:
                self.fails(h)
            except ValueError:
                pass
        return self.head(h)


class Unhashable(torch.nn.Module):
    """A module that cannot be a dict key (dataclass-style equality)."""

    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def __eq__(self, other):
        return isinstance(other, Unhashable) and other.scale == self.scale

    __hash__ = None

    def forward(self, x):
        return x * self.scale


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
    ap.add_argument("--compile-at", type=int, default=-1)
    ap.add_argument("--fullgraph", action="store_true")
    ap.add_argument("--unhashable", action="store_true")
    ap.add_argument("--ticks", action="store_true")
    ap.add_argument("--wait-for-hooks", action="store_true")
    ap.add_argument("--ordered-modules", action="store_true")
    args = ap.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = Net()
    run = torch.compile(model, backend="eager") if args.compile else model
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    if args.wait_for_hooks:
        import torch.optim.optimizer as optimizer_impl
        opt.zero_grad()
        deadline = time.monotonic() + 60
        while not optimizer_impl._global_optimizer_post_hooks and time.monotonic() < deadline:
            time.sleep(0.05)
    if args.ordered_modules:
        # As torch before 2.5 made them: each module's _modules an OrderedDict.
        import collections
        for m in model.modules():
            object.__setattr__(m, "_modules", collections.OrderedDict(m._modules))
    x, y = torch.randn(8, 16), torch.randn(8, 4)
    root_unhashable = Unhashable(1.0)
    if args.unhashable:
        model.__dict__["unhashable"] = [Unhashable(0.5)]
    if args.ticks:
        return train_with_ticks(model, opt, x, y, args.steps)

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
        if step == args.compile_at:
            model.encoder = torch.compile(model.encoder, backend="eager", fullgraph=args.fullgraph)
        begun = calls[0]
        inputs = root_unhashable(x) if args.unhashable else x
        loss = torch.nn.functional.mse_loss(run(inputs, fail=step == args.raise_at), y)
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


class Tick(Exception):
    pass


def train_with_ticks(model, opt, x, y, steps):
    import signal

    raised = in_ours = 0
    ours = ("<chakrashim",)

    def on_alarm(sig, frame):
        nonlocal raised, in_ours
        # Where an exception is safe to take: this file's code (not this
        # handler, nor the loop's own frame, between its try blocks) or
        # chakrashim's Python; never torch's or the standard library's.
        if frame is None or frame.f_code in (on_alarm.__code__, loop_code):
            return
        name = frame.f_code.co_filename
        if name != __file__ and not name.startswith(ours):
            return
        raised += 1
        in_ours += name.startswith(ours)
        raise Tick()

    def one_step():
        loss = torch.nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()

    def loop():
        caught = done = 0
        while done < steps:
            try:
                one_step()
                done += 1
            except Tick:
                caught += 1
        return caught

    loop_code = loop.__code__
    signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, 0.003, 0.003)
    caught = loop()
    signal.setitimer(signal.ITIMER_REAL, 0)
    signal.signal(signal.SIGALRM, signal.SIG_IGN)
    print(f"raised {raised} caught {caught} ours {in_ours}", flush=True)


if __name__ == "__main__":
    main()
