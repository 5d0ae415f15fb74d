"""The soak job's DataLoader workers end with the job (tests/soak/soak_job.py).

torch's worker notes its parent's pid when its loop starts and leaves once
getppid() differs. A worker forked just before the job's os._exit (the
first batch of an epoch came from one worker; the other was still starting)
can note the pid of the process it was re-parented to, and then waits for
indices forever, holding the job's stdout open: seed 11359 hung 2 runs in
24 without the shim. This module is imported by the worker (a spawned one
too, by name), so it holds no state and does no work at import.
"""
import ctypes
import os
import signal

PR_SET_PDEATHSIG = 1


def die_with_parent(parent_pid, worker_id):
    """worker_init_fn (bound to the job's pid with functools.partial): the
    kernel kills this worker when its parent dies, and a parent already
    gone before the request took effect is caught by the check after it."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent_pid:
        os._exit(0)
