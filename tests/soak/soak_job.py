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

feed = batches()
for step in range(args.steps):
    bx, by = next(feed)
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
say(f"rank {rank} finished")
