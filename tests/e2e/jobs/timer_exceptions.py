"""A job whose SIGALRM handler raises an exception every 3 ms,
and catches each one in its training loop: every exception the handler
raised must reach the job. chakrashim used to run Python on the stepping
thread at step boundaries and clear any error there, which erased the ones
that landed inside its query; later it registered its optimizer step hooks
from a Python pending call, which also ran its Python on the main thread.

  python timer_exceptions.py STEPS [MIN_RAISED]

Trains STEPS steps, and on until the handler has raised MIN_RAISED times
(20 x STEPS steps at most): how many ticks land in this file's frames
depends on the machine (a loaded one delivers fewer, coalescing the ones
that come while the job waits for a core), and the test needs enough of
them to mean something whatever the load.

Prints "raised R caught C ours O hooks H": R must equal C (each tick
that was raised and never caught is said on stderr, "lost tick N: ...",
with the frames it was raised in, innermost first); O counts the
Python frames of chakrashim's (code named "<chakrashim ...>") that ever ran
on this, the job's main thread, seen by cProfile's profiler enabled before
torch is imported, but its two optimizer step hooks, which H counts (they
are the one Python of chakrashim's that runs on the job's threads outside
the window, docs/design.md "Counting steps"). The handler also raises when
it interrupts a frame of ours: on the main thread, that exception could
only surface wherever our code happened to run, or be cleared by it; one
raised in a step hook ends that optimizer step as it would any other.
"""
import _lsprof
import signal
import sys

# Before torch: chakrashim attaches during `import torch` and may run code
# of its own from then on. cProfile's C profiler: a profile function
# written in Python would hide the frames that start while it runs, and a
# pending call may run just there.
profiler = _lsprof.Profiler()
profiler.enable()

import torch  # noqa: E402

steps = int(sys.argv[1])
min_raised = int(sys.argv[2]) if len(sys.argv) > 2 else 0


class Tick(Exception):
    pass


raised = 0
# Where each tick was raised: its number, and the (file, function, line) of
# the frames it was raised in, innermost first. Said for the ones never
# caught (a CI run once lost one in 109: issue #53's note).
sites = {}
caught_ticks = set()


def on_alarm(sig, frame):
    # Only where an exception is safe to take: in this file's own work (not
    # the loop's frame, where it could land between its try blocks), in
    # Python run from a string on this thread (what a tool injects), or in
    # Python of chakrashim's. Never inside torch's or the standard library's
    # Python, whose state an exception at an arbitrary bytecode can break.
    global raised
    # A tick inside this handler (Python runs a handler again between its
    # own bytecodes) would raise between `raised += 1` and `raise`: counted
    # twice, caught once.
    if frame is None or frame.f_code in (LOOP_CODE, HANDLER_CODE):
        return
    # "<string>" <module>: code run with PyRun_String (torch's own
    # exec-made helpers are functions, never a <module>).
    code = frame.f_code
    from_string = code.co_filename == "<string>" and code.co_name == "<module>"
    from_us = code.co_filename.startswith("<chakrashim")
    if code.co_filename != __file__ and not from_string and not from_us:
        return
    raised += 1
    chain, f = [], frame
    while f is not None and len(chain) < 8:
        chain.append((f.f_code.co_filename, f.f_code.co_name, f.f_lineno))
        f = f.f_back
    sites[raised] = chain
    raise Tick(raised)


def busy():
    # Pure Python between the ops: where most ticks land.
    total = 0
    for i in range(2000):
        total += i
    return total


def train(model, opt):
    busy()
    loss = model(torch.randn(8, 16)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()


def main():
    torch.manual_seed(0)
    model = torch.nn.Linear(16, 4)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    caught = done = 0
    signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, 0.003, 0.003)
    while done < steps or (raised < min_raised and done < 20 * steps):
        try:
            train(model, opt)
            done += 1
        except Tick as tick:
            caught += 1
            caught_ticks.add(tick.args[0])
    signal.setitimer(signal.ITIMER_REAL, 0)
    signal.signal(signal.SIGALRM, signal.SIG_IGN)
    profiler.disable()
    frames = [e for e in profiler.getstats()
              if not isinstance(e.code, str) and e.code.co_filename.startswith("<chakrashim")]
    hook_names = ("chakrashim_optimizer_pre_hook", "chakrashim_optimizer_post_hook")
    ours = sum(e.callcount for e in frames if e.code.co_name not in hook_names)
    hooks = sum(e.callcount for e in frames if e.code.co_name in hook_names)
    for n in sorted(set(sites) - caught_ticks):
        print(f"lost tick {n}: " + " <- ".join(f"{f}:{name}:{line}" for f, name, line in sites[n]), file=sys.stderr)
    print(f"raised {raised} caught {caught} ours {ours} hooks {hooks}")


LOOP_CODE = main.__code__
HANDLER_CODE = on_alarm.__code__
main()
