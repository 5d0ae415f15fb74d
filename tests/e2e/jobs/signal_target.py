"""A training loop that a test signals in mid-window.

  python signal_target.py STEPS [--handler before|after] [--block]
                                [--catch-int] [--usr1 before-torch|after-torch]
                                [--kill-self-at N [--kill-delay-us D]]

Prints "step N" (flushed) after each optimizer step so the test knows where
it is. --handler installs a Python SIGTERM handler that prints and exits 7,
before the window opens (at import) or after it opened (after step 3).
--block sleeps (600 s) after step 4 without running any torch op, as a job
waiting on I/O would: the capture must still be finalized and the signal
honoured long before it wakes.
--catch-int catches the first KeyboardInterrupt and trains on ("press
Ctrl-C again to quit"); the second one ends the job.
--usr1 installs a SIGUSR1 handler of the job's own (as Lightning does for
Slurm requeues) before or after importing torch; it prints "job got USR1".
--kill-self-at sends SIGTERM to the job itself D microseconds (busy-waited,
0 by default) after step N's optimizer step returned, and prints
"kill at T" (time.monotonic()) just before; the job then trains on. With
N the window's END_STEP, the signal lands while the window closes normally.
"""
import os
import signal
import sys
import time

steps = int(sys.argv[1])
handler_when = sys.argv[sys.argv.index("--handler") + 1] if "--handler" in sys.argv else None
usr1_when = sys.argv[sys.argv.index("--usr1") + 1] if "--usr1" in sys.argv else None
block = "--block" in sys.argv
catch_int = "--catch-int" in sys.argv
kill_at = int(sys.argv[sys.argv.index("--kill-self-at") + 1]) if "--kill-self-at" in sys.argv else None
kill_delay_us = (int(sys.argv[sys.argv.index("--kill-delay-us") + 1])
                 if "--kill-delay-us" in sys.argv else 0)


def on_term(sig, frame):
    print(f"handler got {sig}", flush=True)
    sys.exit(7)


def on_usr1(sig, frame):
    print("job got USR1", flush=True)


if usr1_when == "before-torch":
    signal.signal(signal.SIGUSR1, on_usr1)
import torch  # noqa: E402

if usr1_when == "after-torch":
    signal.signal(signal.SIGUSR1, on_usr1)
if handler_when == "before":
    signal.signal(signal.SIGTERM, on_term)
torch.manual_seed(0)
model = torch.nn.Linear(16, 4)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
interrupted = False
step = 0
while step < steps:
    try:
        loss = model(torch.randn(8, 16)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step == kill_at:
            # Busy: a sleep would let the window's writer and our watcher
            # run first, and the point is to race them.
            until = time.perf_counter() + kill_delay_us / 1e6
            while time.perf_counter() < until:
                pass
            print(f"kill at {time.monotonic()}", flush=True)
            os.kill(os.getpid(), signal.SIGTERM)
        print(f"step {step}", flush=True)
        if handler_when == "after" and step == 3:
            signal.signal(signal.SIGTERM, on_term)
        if block and step == 4:
            time.sleep(600)
        time.sleep(0.05)
        step += 1
    except KeyboardInterrupt:
        if not catch_int or interrupted:
            raise
        interrupted = True
        print("caught one KeyboardInterrupt; again to quit", flush=True)
        step += 1
print("finished", flush=True)
