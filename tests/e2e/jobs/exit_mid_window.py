"""Ends inside the window: `end` just stops training after step 3 (a normal
end, no op after the step), `exit N` calls sys.exit(N) after step 3, `raise`
raises an uncaught exception there (`raise_while_asked`: while
chakrashim's torch.distributed watch asks a slow torch.distributed), `os_exit N` calls os._exit(N) (no exit
handler of anyone runs), `sigkill` kills the process with SIGKILL, and
`sigterm` / `sigint` send the process that signal (no handler of the job's:
it dies of SIGTERM, or of SIGINT through KeyboardInterrupt)."""
import os
import signal
import sys
import time

import torch

from tiny_training import linear_sgd, train_step

how = sys.argv[1]
torch.manual_seed(0)
model, opt = linear_sgd()
for step in range(10):
    train_step(model, opt, torch.randn(4, 8))
    print(f"step {step}", flush=True)
    if how == "raise_while_asked" and step == 2:
        # The window's first question is answered while this thread sleeps;
        # step 3's end asks the next one, which the watch asks a second after
        # the first: from then on its question takes a second (a slow
        # torch.distributed, the job's own patch), so that it is under way
        # when the job fails.
        time.sleep(0.3)
        import torch.distributed as dist

        def slow_is_available(_real=dist.is_available):
            time.sleep(1.0)
            return _real()

        dist.is_available = slow_is_available
    if step == 3:
        if how == "end":
            break
        if how == "raise":
            raise RuntimeError("the job failed in mid-window")
        if how == "raise_while_asked":
            # Fail while the watch's second question is under way: Python
            # then finalizes while the watch is inside Python or waiting for
            # its GIL (CPython ended that thread with pthread_exit, which
            # failed CI's ASan variant; now our atexit callback lets it finish).
            time.sleep(1.0)
            raise RuntimeError("the job failed in mid-window")
        if how == "os_exit":
            os._exit(int(sys.argv[2]))
        if how == "sigkill":
            os.kill(os.getpid(), signal.SIGKILL)
        if how in ("sigterm", "sigint"):
            os.kill(os.getpid(), signal.SIGTERM if how == "sigterm" else signal.SIGINT)
            time.sleep(30)  # the signal ends the job long before
        sys.exit(int(sys.argv[2]))
