"""The soak's job: a small unmodified torch training loop whose shape and
fault come from its arguments, so that the soak can run the very same job
with and without the shim and compare what the two print and return.

  python soak_job.py --kind K --steps N [--fault F --at STEP --where W]
                     [--dir-fault ro|rm --dir-at STEP --dir PATH]

--kind: plain (a loop), thread (a background thread running ops too),
  subproc (a child Python running torch at step 1), loader-fork,
  loader-spawn, loader-fork-persistent, loader-spawn-persistent (a
  DataLoader with two workers, re-created per epoch or persistent), ddp (a
  gloo DistributedDataParallel loop; run under torchrun).
--fault: none, sigterm, sigint, usr1 (the flush signal; the job has a
  handler of its own for it, as Lightning does, so that the job without the
  shim lives too), term2 (SIGTERM, then another one while the first is
  being handled), usr1x2, exit (sys.exit(3)), raise, os_exit (os._exit(5)),
  sigkill. The job raises it itself after step STEP's optimizer step
  (STEP -1: before torch is imported), inside a torch op scope
  (--where op: within a record_function) or outside one (--where out), so
  that the twin without the shim sees the same fault at the same point.
--dir-fault: after step STEP, make PATH read-only or remove it (the trace
  folder), as an operator or a full disk would; it prints nothing, so the
  twin (for which PATH is an unused folder) prints the same.
--compile-at STEP: from step STEP on, the model's first layer runs through
  torch.compile(backend="eager"), compiled then for the first time.
--ticks: a SIGALRM handler raises an exception every 2 ms, but only while
  the job's busy() work or chakrashim's step hooks run (and, but under DDP,
  chakrashim's module hooks); the loop catches each and does that part of
  the step again from the state before it, so that what it prints does not
  depend on where the ticks land; prints whether every one was caught.
--int-exit-ms D: after its last line, the job has a helper process send it
  SIGINT D ms later (a terminal's Ctrl-C while the interpreter ends and
  chakrashim writes a window still open).
Every line printed is flushed: a killed job's stdout ends where it died.
"""
import argparse
import os
import shutil
import signal
import stat
import sys
import threading
import time

p = argparse.ArgumentParser()
p.add_argument("--kind", default="plain")
p.add_argument("--steps", type=int, default=8)
p.add_argument("--fault", default="none")
p.add_argument("--at", type=int, default=0)
p.add_argument("--where", default="out")
p.add_argument("--gap-ms", type=int, default=0, help="term2/usr1x2: delay of the second signal")
p.add_argument("--step-ms", type=int, default=0,
               help="sleep after each step, outside any op (on demand: time for a trigger)")
p.add_argument("--dir-fault", default="none")
p.add_argument("--dir-at", type=int, default=0)
p.add_argument("--dir", default="")
p.add_argument("--compile-at", type=int, default=-1)
p.add_argument("--ticks", action="store_true")
p.add_argument("--int-exit-ms", type=int, default=-1)
args = p.parse_args()


def say(text):
    # One write per line: print() writes the text and the newline apart, so
    # that ranks (or a signal handler run in between) could split a line.
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


got_usr1 = threading.Event()


def on_usr1(sig, frame):
    # Once: two signals close together may come as one, shim or not; and a
    # second call may run inside the first's say(), so mark before printing.
    if got_usr1.is_set():
        return
    got_usr1.set()
    say("job got USR1")


if args.fault in ("usr1", "usr1x2"):
    signal.signal(signal.SIGUSR1, on_usr1)


def second_signal(sig, delay):
    """Another `sig` from a thread after `delay`: while the first one is
    still being handled (the shim's flush of the window)."""
    def send():
        time.sleep(delay)
        os.kill(os.getpid(), sig)
    threading.Thread(target=send, daemon=True).start()


def fire():
    f = args.fault
    if f == "exit":
        sys.exit(3)
    if f == "raise":
        raise RuntimeError("the soak job's fault")
    if f == "os_exit":
        os._exit(5)
    if f == "sigkill":
        os.kill(os.getpid(), signal.SIGKILL)
    if f in ("sigterm", "sigint", "term2"):
        sig = signal.SIGINT if f == "sigint" else signal.SIGTERM
        if f == "term2":
            second_signal(signal.SIGTERM, args.gap_ms / 1000)
        os.kill(os.getpid(), sig)
        time.sleep(60)  # the signal ends the job long before
        say("still alive after the signal")
    if f in ("usr1", "usr1x2"):
        if f == "usr1x2":
            second_signal(signal.SIGUSR1, args.gap_ms / 1000)
        os.kill(os.getpid(), signal.SIGUSR1)
        # Wait for the handler before the next step prints, so that the
        # order of the lines does not depend on timing (the shim runs it
        # after its flush), and let a second signal land.
        for _ in range(600):
            if got_usr1.is_set():
                break
            time.sleep(0.05)
        time.sleep(args.gap_ms / 1000 + 0.05)


def maybe_fault(step):
    # The folder fault is one outside actor: rank 0 alone. Two ranks doing it
    # raced each other (seed 10591: rank 1 removed a symlink's target, then
    # rank 0's makedirs met the dangling link and raised).
    if (args.dir_fault != "none" and step == args.dir_at and args.dir
            and os.environ.get("RANK", "0") == "0"):
        os.makedirs(os.path.realpath(args.dir), exist_ok=True)
        if args.dir_fault == "ro":
            for d, subdirs, _ in os.walk(args.dir):
                for s in subdirs:
                    # A folder may go between the listing and the chmod: the
                    # shim removes the empty folders of a window that kept
                    # no step, on its writer thread (seed 10483).
                    try:
                        os.chmod(os.path.join(d, s), stat.S_IRUSR | stat.S_IXUSR)
                    except FileNotFoundError:
                        pass
            os.chmod(args.dir, stat.S_IRUSR | stat.S_IXUSR)
        else:
            shutil.rmtree(os.path.realpath(args.dir), ignore_errors=True)  # a symlink's target
    if args.fault == "none" or step != args.at:
        return
    if args.where == "op" and step >= 0:
        import torch
        with torch.profiler.record_function("soak fault"):
            torch.ones(4).add_(1)
            fire()
    else:
        fire()


maybe_fault(-1)
import torch  # noqa: E402

torch.manual_seed(0)
torch.set_num_threads(1)
torch.use_deterministic_algorithms(True)

rank = 0
if args.kind == "ddp":
    import torch.distributed as dist
    # Before the process group exists: DDP's constructor imports this module
    # lazily, and its functions' defaults (`group=group.WORLD`) would then
    # hold the process group until the interpreter's end, so that
    # destroy_process_group() could not join gloo's workers (below).
    import torch.distributed.nn.functional  # noqa: F401
    dist.init_process_group("gloo")
    rank = dist.get_rank()

model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
if args.kind == "ddp":
    model = torch.nn.parallel.DistributedDataParallel(model)
opt = torch.optim.SGD(model.parameters(), lr=0.05)
gen = torch.Generator().manual_seed(1000 + rank)
x = torch.randn(8, 16, generator=gen)
y = torch.randn(8, 4, generator=gen)

stop_thread = threading.Event()
if args.kind == "thread":
    def background():
        # Not a daemon, and it stops once the main thread is done: a daemon
        # thread inside a torch op when the interpreter finalizes (after a
        # KeyboardInterrupt or sys.exit, say) is ended by pthread_exit from
        # torch's GIL guard, a noexcept destructor, and the process aborts.
        # That is CPython's and torch's, shim or not (seed 159 aborted 11
        # of 12 runs without the shim), so the soak's job must not do it.
        a = torch.randn(32, 32)
        while not stop_thread.is_set() and threading.main_thread().is_alive():
            a = torch.tanh(a @ a)
            time.sleep(0.001)
    threading.Thread(target=background).start()


def batches():
    """The steps' batches: the same tensors for every kind, so that every
    kind prints the same losses; loaders go through real workers."""
    if not args.kind.startswith("loader"):
        while True:
            yield x, y
    from torch.utils.data import DataLoader, TensorDataset
    ctx = "spawn" if "spawn" in args.kind else "fork"
    if ctx == "spawn":
        # A spawned worker runs the main script again unless told where
        # __main__ lives by name, and this script has no main guard: every
        # worker then trained a model of its own, started loaders of its own
        # during its bootstrap and died of it, with or without the shim
        # (found by seeds 33008 and 33019, whose workers also left their
        # windows' claimed files when their tick timer killed them at exit).
        # Nothing the workers unpickle comes from __main__ (the dataset is
        # torch's, the init function soak_worker's), so they need none of it.
        import __main__
        if getattr(__main__, "__spec__", None) is None and hasattr(__main__, "__file__"):
            del __main__.__file__
    data = TensorDataset(x.repeat(4, 1), y.repeat(4, 1))
    import functools
    import soak_worker  # beside this file; a spawned worker imports it by name
    loader = DataLoader(data, batch_size=8, num_workers=2, multiprocessing_context=ctx,
                        persistent_workers="persistent" in args.kind,
                        worker_init_fn=functools.partial(soak_worker.die_with_parent, os.getpid()))
    while True:
        for bx, by in loader:  # an epoch of 4 steps; a fresh pair of workers each
            yield bx, by


CHILD = ("import torch; torch.manual_seed(0); a = torch.randn(8, 8)\n"
         "for _ in range(20): a = torch.tanh(a @ a)\n"
         "print('child sum %.4f' % a.sum().item())")

class Tick(Exception):
    pass


ticks = {"raised": 0, "caught": 0}


def busy():
    # Pure Python between the ops: where the job's own ticks land.
    total = 0
    for i in range(3000):
        total += i
    return total


RAISE_IN = {busy.__code__}


def on_alarm(sig, frame):
    # Only where the step can be done again from the state before it: the
    # job's busy() and chakrashim's step hooks (an optimizer step they end
    # is done again), and chakrashim's module hooks but under DDP (a forward
    # done again on one rank would desynchronize the ranks' collectives).
    if frame is None:
        return
    code = frame.f_code
    ours = code.co_filename.startswith("<chakrashim")
    module_hook = code.co_filename == "<chakrashim module scopes>"
    if code in RAISE_IN or (ours and (args.kind != "ddp" or not module_hook)):
        ticks["raised"] += 1
        raise Tick()


def retried(part):
    """part() again until no tick ends it; what it returned."""
    while True:
        try:
            return part()
        except Tick:
            ticks["caught"] += 1


def forward_backward(bx, by):
    opt.zero_grad()
    loss = torch.nn.functional.mse_loss(model(bx), by)
    loss.backward()
    return loss


def optimizer_step():
    params = [p for g in opt.param_groups for p in g["params"]]
    before = [p.detach().clone() for p in params]

    def step():
        try:
            opt.step()
        except Tick:
            with torch.no_grad():
                for p, b in zip(params, before):
                    p.copy_(b)
            raise
    retried(step)


if args.ticks:
    signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, 0.002, 0.002)

feed = batches()
for step in range(args.steps):
    bx, by = next(feed)
    if step == args.compile_at:
        inner = model.module if args.kind == "ddp" else model
        inner[0] = torch.compile(inner[0], backend="eager")
    if args.ticks:
        retried(busy)
        # Under DDP, forward and backward as one (their collectives must run
        # once on every rank): no tick lands there (on_alarm).
        loss = forward_backward(bx, by) if args.kind == "ddp" else retried(lambda: forward_backward(bx, by))
        optimizer_step()
    else:
        loss = torch.nn.functional.mse_loss(model(bx), by)
        opt.zero_grad()
        loss.backward()
        opt.step()
    say(f"rank {rank} step {step} loss {loss.item():.6f}")
    if args.kind == "subproc" and step == 1:
        import subprocess
        out = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True)
        say(out.stdout.strip() + f" rc {out.returncode}")
    if args.step_ms:
        time.sleep(args.step_ms / 1000)
    maybe_fault(step)
stop_thread.set()
if args.kind == "ddp":
    dist.barrier()
    # The process group's last reference must go in destroy_process_group(),
    # whose gloo destructor joins its worker threads: DDP holds it, so the
    # model (and what holds the model) goes first. A worker still running at
    # exit may release a finished work's Python context while the interpreter
    # finalizes, and CPython ends that thread with pthread_exit through a
    # noexcept destructor: SIGABRT, shim or not (seed 90225: 2 of 30 runs
    # without the shim). With both steps, no gloo worker is left after it.
    del model, opt, loss
    dist.destroy_process_group()
if args.ticks:
    signal.setitimer(signal.ITIMER_REAL, 0)
    signal.signal(signal.SIGALRM, signal.SIG_IGN)
    say(f"rank {rank} every tick caught {ticks['raised'] == ticks['caught']}")
say(f"rank {rank} finished")
if args.int_exit_ms >= 0:
    import subprocess
    subprocess.Popen(["/bin/sh", "-c", f"sleep {args.int_exit_ms / 1000}; kill -INT {os.getpid()} 2>/dev/null"],
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
