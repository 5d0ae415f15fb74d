"""A randomized soak of the shim (issue #24): many short real torch jobs,
each with a scenario drawn from its seed, each judged against the same job
run without the shim under the same fault (its "twin").

  soak.py [--runs N] [--seed S] [--seeds S1,S2,...] [--rotate S1,S2,... [--turn auto|all|T]]
          [--jobs N] [--keep DIR] [--quiet]

Run i uses seed S+i (or the listed seeds, then this commit's turn of the
rotating ones: TURNS); `--seed S --runs 1` replays a failure. Every failure prints its seed, its scenario and why. A run that
ends as the job without the shim also ends now and then (TWIN_RERUNS) is
printed as its own outcome, JOB [also fails without the shim], and is no
failure. Exit status: 0 when no run failed, 1 when one failed, 2 on a usage
error.

Paths come from CHAKRASHIM_TEST_* variables (CTest sets them; scripts/soak.sh
sets them from a build folder). What a run draws and how it is judged:
docs/soak.md.
"""
import argparse
import gzip
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "support"))
from chakra_test import CLI, PRELOAD, PYTHON, clean_env, torchrun  # noqa: E402

# The output folders' run marker (common/files/run_marker.h).
RUN_MARKER = ".chakrashim-run"

JOB = os.path.join(HERE, "soak_job.py")
FAKE_CUPTI = os.environ.get("CHAKRASHIM_TEST_FAKE_CUPTI", "")

KINDS = [("plain", 4), ("thread", 2), ("subproc", 1), ("loader-fork", 2),
         ("loader-fork-persistent", 1), ("loader-spawn", 1), ("loader-spawn-persistent", 1),
         ("ddp1", 1), ("ddp2", 1)]
FAULTS = [("none", 4), ("sigterm", 2), ("sigint", 1), ("usr1", 2), ("term2", 1), ("usr1x2", 1),
          ("exit", 1), ("raise", 1), ("os_exit", 1), ("sigkill", 1)]
FOLDERS = [("absolute", 4), ("relative", 2), ("symlink", 2)]
DIR_FAULTS = [("none", 8), ("ro", 1), ("rm", 1), ("full", 1)]
# The windows: one fixed window, repeated windows (CHAKRA_REPEAT_EVERY), or
# on demand (CHAKRA_ON_DEMAND=1, asked by `chakrashim trigger` at a random
# moment). Drawn only for seeds from WINDOWS_FROM_SEED on, from a stream of
# their own: the seeds below keep the scenarios they drew when their
# failures were found (the regression seeds of soak.short, the 1,000-run
# soaks of seeds 10000-11999).
WINDOWS = [("fixed", 6), ("repeat", 2), ("on_demand", 2)]
WINDOWS_FROM_SEED = 20000
# Issue #48's draws, from seeds EXTRAS_FROM_SEED on, from a stream of their
# own (older seeds keep their scenarios): module scopes, the model's first
# torch.compile at a drawn step (inside the window or not), the job's own
# signal handler raising every 2 ms (in its own work and in chakrashim's
# hooks), and a Ctrl-C while the job waits at exit for a window written then.
EXTRAS_FROM_SEED = 30000
# A run whose exit status or stdout differs from its twin's is blamed on the
# shim only after the job without the shim ran this many more times and
# never ended as the run did. The twin runs once per job, and a job that
# fails now and then without the shim passed that one run: seed 90225 (2
# ranks, gloo's workers alive at exit) aborted 4 runs in 55 with the shim
# and 2 in 30 without it, and the soak blamed the shim.
TWIN_RERUNS = 10
# The outcome of such a run: not a failure of the shim's; a job (or torch)
# that fails by itself, to fix in the soak's job.
ALSO_WITHOUT = "also fails without the shim"


def pick(rng, weighted):
    names, weights = zip(*weighted)
    return rng.choices(names, weights)[0]


def draw(seed):
    """The scenario of a seed: a pure function of it (replays draw the same)."""
    rng = random.Random(seed)
    s = {"seed": seed, "kind": pick(rng, KINDS), "steps": rng.randint(5, 10)}
    s["fault"] = pick(rng, FAULTS)
    if s["kind"] == "ddp2" and s["fault"] not in ("none", "usr1", "usr1x2"):
        # A rank that dies makes torchrun kill the other at a moment of its
        # own: what the other printed last is a race, shim or not.
        s["fault"] = rng.choice(["none", "usr1", "usr1x2"])
    s["at"] = rng.randint(-1, s["steps"] - 1)
    if s["fault"] in ("usr1", "usr1x2"):
        s["at"] = max(0, s["at"])  # the job's handler is installed before torch
    s["where"] = rng.choice(["op", "out"])
    s["gap_ms"] = rng.choice([0, 1, 5, 20, 100])
    start = rng.randint(0, s["steps"])  # sometimes after the job's last step
    env = {"CHAKRA_START_STEP": start, "CHAKRA_END_STEP": start + rng.randint(0, 3)}
    if rng.random() < 0.25:
        env["CHAKRA_WARMUP_STEPS"] = rng.randint(0, 1)
        env["CHAKRA_ACTIVE_STEPS"] = rng.randint(1, 2)
    if rng.random() < 0.2:
        env["CHAKRA_MAX_MEMORY"] = rng.choice(["4K", "16K", "64K"])
    if rng.random() < 0.3:
        env["CHAKRA_GZIP"] = 1
    off = rng.random()
    if off < 0.1:
        env["CHAKRA_HOST_TRACE"] = 0
    elif off < 0.2:
        env["CHAKRA_DEVICE_TRACE"] = 0
    if FAKE_CUPTI and rng.random() < 0.3:
        env["CHAKRA_CUPTI_LIB"] = FAKE_CUPTI
    env["CHAKRA_EXIT_TIMEOUT"] = rng.choice([2, 5, 10])
    env["CHAKRA_FLUSH_SIGNAL"] = "USR1"
    s["env"] = env
    s["folder"] = pick(rng, FOLDERS)
    s["dir_fault"] = pick(rng, DIR_FAULTS)
    s["dir_at"] = rng.randint(0, s["steps"] - 1)
    s["windows"] = "fixed"
    if seed >= WINDOWS_FROM_SEED:
        draw_windows(random.Random(f"windows-{seed}"), s)
    if seed >= EXTRAS_FROM_SEED:
        draw_extras(random.Random(f"extras-{seed}"), s)
    return s


def draw_extras(rng, s):
    if rng.random() < 0.4:
        s["env"]["CHAKRA_MODULE_SCOPES"] = 1
    if rng.random() < 0.25:
        s["compile_at"] = rng.randint(0, s["steps"] - 1)
    if rng.random() < 0.3:
        s["ticks"] = True
    # A Ctrl-C while the job exits: a single process (torchrun's own Ctrl-C
    # handling decides a DDP job's end), and only where the job has no
    # fault of its own to end it first.
    if not s["kind"].startswith("ddp") and s["fault"] == "none" and rng.random() < 0.4:
        s["fault"] = "int_exit"
        s["int_exit_ms"] = rng.choice([0, 50, 150, 300])


def draw_windows(rng, s):
    s["windows"] = pick(rng, WINDOWS)
    env = s["env"]
    if s["windows"] == "repeat":
        start, end = env["CHAKRA_START_STEP"], env["CHAKRA_END_STEP"]
        env["CHAKRA_REPEAT_EVERY"] = end - start + 1 + rng.randint(1, 2)  # a step between
        if rng.random() < 0.3:
            env["CHAKRA_REPEAT_UNTIL"] = end + rng.randint(0, 6)
    elif s["windows"] == "on_demand":
        for k in ("CHAKRA_START_STEP", "CHAKRA_END_STEP"):
            del env[k]
        env["CHAKRA_ON_DEMAND"] = 1
        # Long enough for a trigger to land: the job publishes its step at
        # most once a second and looks for triggers once a second, so the
        # steps are slowed (a sleep outside any op) and the window is asked
        # for a second or two ahead.
        s["steps"] = rng.randint(16, 24)
        s["step_ms"] = 250
        s["trigger_delay_s"] = rng.choice([0, 0.2, 0.5])
        s["trigger_in"] = rng.choice([5, 7, 9])
        s["trigger_steps"] = rng.randint(1, 3)


def describe(s):
    e = " ".join(f"{k[7:]}={v}" for k, v in s["env"].items()
                 if k not in ("CHAKRA_CUPTI_LIB",)) + (" cupti=double" if "CHAKRA_CUPTI_LIB" in
                                                       s["env"] else "")
    trigger = (f" step_ms={s['step_ms']} trigger={s['trigger_steps']}@+{s['trigger_delay_s']}s,"
               f"in={s['trigger_in']}"
               if s["windows"] == "on_demand" else "")
    extras = "".join([f" compile_at={s['compile_at']}" if "compile_at" in s else "",
                      " ticks" if s.get("ticks") else "",
                      f" int_exit_ms={s['int_exit_ms']}" if "int_exit_ms" in s else ""])
    return (f"kind={s['kind']} steps={s['steps']} fault={s['fault']} at={s['at']} "
            f"where={s['where']} gap_ms={s['gap_ms']} folder={s['folder']} "
            f"dir_fault={s['dir_fault']}@{s['dir_at']} {e}{trigger}{extras}")


def job_cmd(s, trace_arg):
    args = ["--kind", "ddp" if s["kind"].startswith("ddp") else s["kind"],
            "--steps", str(s["steps"]), "--fault", "none" if s["fault"] == "int_exit" else s["fault"],
            "--at", str(s["at"]),
            "--where", s["where"], "--gap-ms", str(s["gap_ms"])]
    if s.get("step_ms"):
        args += ["--step-ms", str(s["step_ms"])]
    if "compile_at" in s:
        args += ["--compile-at", str(s["compile_at"])]
    if s.get("ticks"):
        args += ["--ticks"]
    if "int_exit_ms" in s:
        args += ["--int-exit-ms", str(s["int_exit_ms"])]
    if s["dir_fault"] in ("ro", "rm"):
        args += ["--dir-fault", s["dir_fault"], "--dir-at", str(s["dir_at"]), "--dir", trace_arg]
    if s["kind"].startswith("ddp"):
        return torchrun(JOB, *args, nproc=2 if s["kind"] == "ddp2" else 1)
    return [PYTHON, JOB, *args]


def session_pids(sid):
    out = subprocess.run(["ps", "-e", "-o", "pid=,sid="], capture_output=True, text=True).stdout
    return [int(p) for p, s in (line.split() for line in out.splitlines()) if int(s) == sid]


def dump_stacks(sid):
    """Every thread's stack of every process of the hung run, from gdb."""
    text = []
    for pid in session_pids(sid):
        try:
            g = subprocess.run(["gdb", "-p", str(pid), "-batch", "-nx",
                                "-ex", "thread apply all bt"],
                               capture_output=True, text=True, timeout=60)
            text.append(f"---- pid {pid}\n{g.stdout}{g.stderr[-2000:]}")
        except (OSError, subprocess.TimeoutExpired) as e:
            text.append(f"---- pid {pid}: gdb failed: {e}")
    return "\n".join(text)


class Result:
    def __init__(self, rc, out, err, secs, hung=False, stacks=""):
        self.rc, self.out, self.err, self.secs = rc, out, err, secs
        self.hung, self.stacks = hung, stacks


def execute(cmd, env, cwd, bound):
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, start_new_session=True)
    try:
        out, err = p.communicate(timeout=bound)
        return Result(p.returncode, out, err, time.monotonic() - t0)
    except subprocess.TimeoutExpired:
        stacks = dump_stacks(p.pid)
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        out, err = p.communicate()
        return Result(p.returncode, out, err, time.monotonic() - t0, hung=True, stacks=stacks)


def gloo_flake(r):
    """A 2-rank launch that failed on loopback, shim or not: gloo's mesh, or
    torchrun's store on a port that another run took between free_port()
    and the bind (runs go two at a time)."""
    return any(t in r.err for t in ("connectFullMesh", "Connection reset by peer", "EADDRINUSE",
                                    "address already in use"))


def outcome_differences(s, r, twin):
    """How run `r` ended differently from `twin`: exit status and stdout
    (DDP's lines sorted: ranks interleave). Empty when they ended alike. A
    Ctrl-C at exit (int_exit) may find the job without the shim gone
    already, and the job with it waiting for its files, which it then dies
    of (docs/guarantees.md): a SIGINT death is that job's outcome too."""
    out = []
    if r.rc != twin.rc and not (s["fault"] == "int_exit" and r.rc in (-signal.SIGINT, 130)):
        # Both sides' stderr: seed 10307 (ddp2, two flush signals) once
        # saw the job without the shim exit 1 and never again in replays.
        out.append(f"exit status {r.rc}, without the shim {twin.rc}\n"
                   f"  the job without the shim, stderr (last 2000 chars):\n{twin.err[-2000:]}")
    ordered = not s["kind"].startswith("ddp")
    mine, theirs = r.out.splitlines(), twin.out.splitlines()
    if (mine if ordered else sorted(mine)) != (theirs if ordered else sorted(theirs)):
        out.append(f"stdout differs:\n--- shim\n{r.out}--- no shim\n{twin.out}")
    return out


def files_under(root):
    out = []
    for d, _, names in os.walk(root):
        out += [os.path.relpath(os.path.join(d, n), root) for n in names]
    return sorted(out)


def cycles_done_by(s, step):
    """How many capture cycles may have ended, and been published, by
    `step` (every repeat of a repeated window counted): those whose last
    step is at or before it; with CHAKRA_MAX_MEMORY, also those that had
    kept a step by then, since the cap may cut a cycle in any of its steps
    (seed 12644: cut in the window's first step, then os._exit in it).
    None on demand, where the trigger's moment decides."""
    e = s["env"]
    if s["windows"] == "on_demand":
        return None
    start, end = e["CHAKRA_START_STEP"], e["CHAKRA_END_STEP"]
    warm, active = e.get("CHAKRA_WARMUP_STEPS", 0), e.get("CHAKRA_ACTIVE_STEPS")
    every = e.get("CHAKRA_REPEAT_EVERY")
    until = e.get("CHAKRA_REPEAT_UNTIL", 10 ** 9)
    # The windows that may have ended by `step`: each repeat starts `every`
    # later, while it still ends by REPEAT_UNTIL and starts by `step`.
    shifts = range(0, max(0, min(until - end, step - start)) + 1, every) if every else [0]
    capped = "CHAKRA_MAX_MEMORY" in e
    # The cap cuts at an op, and the job's ops after its optimizer step (the
    # loss it prints) count in the next step: a cycle that begins at step+1
    # may be cut, and written, before the fault at `step` (seed 560016: the
    # window 2-4 cut at its first op, loss.item() after step 1's optimizer
    # step, then os._exit at step 1).
    reach = step + 1 if capped else step
    if every:
        shifts = range(0, max(0, min(until - end, reach - start)) + 1, every)
    n = 0
    for shift in shifts:
        if active is None:
            n += (start if capped else end) + shift <= reach
            continue
        for first in range(start + shift, end + shift + 1, warm + active):
            last = min(first + warm + active - 1, end + shift)
            # A cut in the warmup keeps no step, and such a cycle writes nothing.
            n += (min(first + warm, last) if capped else last) <= reach
    return n


def capture_root(path):
    """The folder of a trace file's capture, relative to the trace folder:
    "" for a fixed window, "step-S" for a repeated or triggered one."""
    first = path.split(os.sep, 1)[0]
    return first if re.fullmatch(r"step-[0-9]+", first) else ""


def trigger_when_published(s, real, done):
    """On demand: once the job publishes its step, wait the drawn delay and
    ask for a window with `chakrashim trigger` (what it answers does not
    matter: the job may be ending, or its folder gone)."""
    control = os.path.join(real, ".chakrashim")
    while not done.wait(0.05):
        try:
            published = any(os.path.exists(os.path.join(control, j, "step.json"))
                            for j in os.listdir(control))
        except OSError:
            published = False
        if published:
            if not done.wait(s["trigger_delay_s"]):
                subprocess.run([CLI, "trigger", "--in", str(s["trigger_in"]),
                                "--steps", str(s["trigger_steps"]), real],
                               capture_output=True, timeout=30)
            return


def shape(name):
    """A file name with its random parts (mkdtemp's 8 characters, as in
    multiprocessing's pymp-XXXXXXXX/listener-XXXXXXXX) made alike."""
    return re.sub(r"([-_])[A-Za-z0-9_]{8}(?=/|$)", r"\1*", name)


def mp_leftover(s, name):
    """Python multiprocessing's listener socket (pymp-*/listener-*), left in
    TMPDIR when the job ends without its exit handlers (os._exit, SIGKILL).
    Whether it exists by then depends on how far the DataLoader's workers
    got, shim or not: seed 11359 (os._exit at step 4) left one where its
    one twin sample had not; five runs without the shim left two each. Not
    ours (chakrashim creates nothing in TMPDIR), so not judged."""
    return (s["fault"] in ("os_exit", "sigkill")
            and re.fullmatch(r"pymp-[a-z0-9_]{8}/listener-[a-z0-9_]{8}", name) is not None)


def load_json(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


class Soak:
    # Thread-safe: with --jobs N, N runs go at once on threads of the driver
    # (each run is a child process; the threads only wait). A twin is run
    # once per job shape, under that shape's own lock.
    def __init__(self, keep=None, quiet=False):
        self.twins = {}
        self.twin_locks = {}
        self.lock = threading.Lock()
        self.keep, self.quiet = keep, quiet

    def twin(self, s):
        """The job without the shim under the same fault (cached by job)."""
        key = (s["kind"], s["steps"], s.get("step_ms", 0), s["fault"], s["at"], s["where"], s["gap_ms"],
               s["dir_fault"] if s["dir_fault"] in ("ro", "rm") else "none", s["dir_at"],
               s.get("compile_at"), s.get("ticks"), s.get("int_exit_ms"))
        with self.lock:
            key_lock = self.twin_locks.setdefault(key, threading.Lock())
        with key_lock:
            return self._twin(s, key)

    def _twin(self, s, key):
        if key not in self.twins:
            self.twins[key] = run_twin(s)
        return self.twins[key]

    def run(self, s):
        """Runs scenario `s` under the shim; returns the list of failures
        (the shim's). A run that ended as the job without the shim also
        ends sometimes has none, and s["verdict"] says so (ALSO_WITHOUT)."""
        twin = self.twin(s)
        base = tempfile.mkdtemp(prefix="chakra-soak-")
        fails = []
        try:
            fails, r, outcome_only = self._run(s, twin, base)
            if outcome_only:
                fails = self.settle(s, r, fails)
            return fails
        finally:
            for d, subdirs, _ in os.walk(base):  # a read-only fault's folders
                for sd in subdirs:
                    try:
                        os.chmod(os.path.join(d, sd), 0o755)
                    except OSError:
                        pass
            if self.keep and (fails or s.get("verdict")):  # before the tmpfs goes
                dest = os.path.join(self.keep, f"seed-{s['seed']}")
                shutil.rmtree(dest, ignore_errors=True)
                try:  # sockets (multiprocessing's listeners) do not copy
                    shutil.copytree(base, dest, symlinks=True, ignore_dangling_symlinks=True)
                except shutil.Error:
                    pass
            with open("/proc/mounts") as f:
                mounts = [line.split()[1] for line in f if line.split()[1].startswith(base)]
            for m in mounts:
                subprocess.run(["umount", "-l", m], capture_output=True)
            shutil.rmtree(base, ignore_errors=True)

    def _run(self, s, twin, base):
        fails = []
        cwd, tmp, outside = (os.path.join(base, d) for d in ("cwd", "tmp", "abs"))
        for d in (cwd, tmp, outside):
            os.mkdir(d)
        real = os.path.join(outside, "traces")
        if s["dir_fault"] == "full":
            os.mkdir(real)
            m = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=96k", "tmpfs", real],
                               capture_output=True, text=True)
            if m.returncode != 0:
                s["dir_fault"] = "none (no tmpfs: %s)" % m.stderr.strip()
        if s["folder"] == "absolute":
            trace_arg = real
        elif s["folder"] == "relative":
            if s["dir_fault"] != "full":  # the tmpfs lies under abs/: reach it from cwd
                real = os.path.join(cwd, "traces")
            trace_arg = os.path.relpath(real, cwd)
        else:
            os.makedirs(real, exist_ok=True)
            os.symlink(real, os.path.join(cwd, "link"))
            trace_arg = os.path.join(cwd, "link")
        env = clean_env(LD_PRELOAD=PRELOAD, CHAKRA_PROFILE=1, CHAKRA_TRACE_DIR=trace_arg,
                        TMPDIR=tmp, OMP_NUM_THREADS=1, PATH=os.environ["PATH"],
                        **{k: str(v) for k, v in s["env"].items()})
        bound = 2 * twin.secs + s["env"]["CHAKRA_EXIT_TIMEOUT"] + 45
        for _ in range(3):
            done = threading.Event()
            asker = None
            if s["windows"] == "on_demand":
                asker = threading.Thread(target=trigger_when_published, args=(s, real, done))
                asker.start()
            try:
                r = execute(job_cmd(s, trace_arg), env, cwd, bound)
            finally:
                done.set()
                if asker:
                    asker.join()
            if not gloo_flake(r):
                break
            shutil.rmtree(real, ignore_errors=True)
        if r.hung:
            fails.append(f"hung: no end within {bound:.0f} s; stacks:\n{r.stacks}")
        outcome = outcome_differences(s, r, twin)
        fails += outcome
        # Files.
        files = files_under(real) if os.path.isdir(real) else []
        # The run markers (.chakrashim-run, docs/design.md): each a plain
        # file in an output folder naming one run; not a trace to check.
        markers = [f for f in files if os.path.basename(f) == RUN_MARKER]
        files = [f for f in files if f not in markers]
        for f in markers:
            path = os.path.join(real, f)
            folder = os.path.basename(os.path.dirname(f))
            if os.path.islink(path) or not os.path.isfile(path) or os.path.getsize(path) > 256 \
                    or not re.match(r"^\d+_(chakra|kineto)(\.\d+)?$", folder):
                fails.append(f"a run marker that is not ours: {f}")
        # On demand, the control folder (.chakrashim/) is ours too; a job
        # that ends normally removes its step.json, one killed leaves it.
        final = [f for f in files if not f.endswith(".partial")
                 and not f.startswith(".chakrashim" + os.sep)]
        stray = [f for f in final
                 if not os.path.relpath(f, capture_root(f) or ".").startswith(("0_chakra", "0_kineto"))
                 or bool(capture_root(f)) != (s["windows"] != "fixed")]
        if stray:
            fails.append(f"unexpected files in the trace folder: {stray}")
        traces = [f for f in final if f not in stray]
        by_root = {}
        for f in traces:  # each window's capture is checked as one
            by_root.setdefault(capture_root(f), []).append(os.path.join(real, f))
        s["windows_written"] = len(by_root)
        for root, paths in sorted(by_root.items()):
            c = subprocess.run([CLI, "check", "--quiet", *paths], capture_output=True, text=True)
            if c.returncode != 0:
                fails.append(f"chakrashim check failed ({c.returncode}) on {root or 'the trace folder'}:\n"
                             f"{c.stdout}{c.stderr}")
        traces = [os.path.join(real, f) for f in traces]
        for path in traces:
            if "_chakra" not in path:
                continue
            try:
                ids = [n["id"] for n in load_json(path)["nodes"]]
            except (ValueError, OSError, KeyError) as e:
                fails.append(f"{path}: unreadable ET: {e}")
                continue
            if len(ids) != len(set(ids)):
                fails.append(f"{os.path.relpath(path, real)}: duplicate node ids")
        if s["fault"] == "int_exit":
            # A first Ctrl-C at exit waits for the files (within the exit
            # timeout, which says so when it passes).
            partial = [f for f in files if f.endswith(".partial")]
            if partial and "did not finish within CHAKRA_EXIT_TIMEOUT" not in r.err:
                fails.append(f"a Ctrl-C at exit left {partial}")
        if s["fault"] in ("sigkill", "os_exit") and s["at"] >= 0:
            allowed = cycles_done_by(s, s["at"])
            ets = [f for f in final if "_chakra" in f]
            if allowed is not None and len(ets) > allowed:
                fails.append(f"{s['fault']} at step {s['at']}: final ETs {ets}, "
                             f"at most {allowed} window(s) had ended")
        elif s["fault"] in ("sigkill", "os_exit") and final:
            fails.append(f"{s['fault']} before torch: final files {final}")
        # Stray files outside the trace folder.
        cwd_files = [f for f in files_under(cwd)
                     if not f.startswith(("traces" + os.sep, "link"))]
        extra = sorted(set(map(shape, cwd_files)) - set(map(shape, twin.cwd_files)))
        extra += sorted(set("TMPDIR/" + shape(f) for f in files_under(tmp) if not mp_leftover(s, f))
                        - set("TMPDIR/" + shape(f) for f in twin.tmp_files))
        extra += [f"abs/{f}" for f in os.listdir(outside) if f != "traces"]
        if extra:
            fails.append(f"stray files outside the trace folder: {extra}")
        # Only the job's outcome differs, or it hung (every file as it must
        # be): settle() asks the job without the shim again before blaming us.
        outcome_only = bool(fails) and len(fails) == len(outcome) + int(r.hung)
        r.bound = bound
        if fails and not r.hung:
            fails.append(f"stderr (last 3000 chars):\n{r.err[-3000:]}")
        s["secs"] = r.secs
        return fails, r, outcome_only

    def settle(self, s, r, fails):
        """A run whose only findings are its exit status or stdout, or that
        hung: runs the job without the shim up to TWIN_RERUNS more times
        (each within the run's time bound). If one ends as the run did (hung
        too, or with the same status and stdout), the run's outcome is the
        job's own (s["verdict"] = ALSO_WITHOUT, no failure of the shim's);
        otherwise the failures stand, saying how many more runs without the
        shim ended otherwise. Findings about files are the shim's whatever
        the twin does: run() calls this only when there are none. (Seed
        11359 hung in CI: a DataLoader worker forked just before the job's
        os._exit outlived it, 2 runs in 24 without the shim; the job's
        workers now die with it, tests/soak/soak_worker.py.)"""
        for n in range(1, TWIN_RERUNS + 1):
            again = run_twin(s, bound=r.bound)
            if (again.hung if r.hung else not again.hung and not outcome_differences(s, r, again)):
                s["verdict"] = ALSO_WITHOUT
                ended = "hung too" if r.hung else f"ended the same way (exit status {again.rc})"
                s["verdict_detail"] = (f"the job without the shim {ended} in its rerun {n}; first run: "
                                       f"exit status {self.twin(s).rc}\n  the job without the shim, "
                                       f"stderr (last 2000 chars):\n{again.err[-2000:]}"
                                       + (f"\n  its stacks:\n{again.stacks}" if again.hung else ""))
                return []
        # On the first finding's second line: signature() groups by first lines.
        first, _, rest = fails[0].partition("\n")
        more = f"  (the job without the shim ran {TWIN_RERUNS} more times: none ended as this run did)"
        return [first + "\n" + more + ("\n" + rest if rest else "")] + fails[1:]


def run_twin(s, bound=600):
    """The job of `s` run once without the shim, under the same fault (a
    gloo or port flake of the launch retried, as for the run), within
    `bound` seconds (then it hung, and was killed)."""
    base = tempfile.mkdtemp(prefix="chakra-soak-twin-")
    try:
        for d in ("cwd", "tmp"):
            os.mkdir(os.path.join(base, d))
        trace = os.path.join(base, "cwd", "unused")
        env = clean_env(TMPDIR=os.path.join(base, "tmp"), OMP_NUM_THREADS=1,
                        PATH=os.environ["PATH"])
        for _ in range(3):
            r = execute(job_cmd(s, trace), env, os.path.join(base, "cwd"), bound)
            if not gloo_flake(r):
                break
        r.cwd_files = [f for f in files_under(os.path.join(base, "cwd"))
                       if not f.startswith("unused")]
        r.tmp_files = files_under(os.path.join(base, "tmp"))
        return r
    finally:
        shutil.rmtree(base, ignore_errors=True)


def signature(fails):
    """A short name of a failure, to group the seeds of one defect: the
    first line of each finding, with check's error rules only."""
    out = []
    for f in fails:
        if f.startswith("stderr"):
            continue
        if f.startswith("chakrashim check failed"):
            rules = sorted(set(line.split("[")[1].split("]")[0] for line in f.splitlines()
                               if ": error [" in line))
            out.append("check errors " + ",".join(rules))
        else:
            out.append(f.splitlines()[0].split(":")[0])
    return "; ".join(out)


# The short soak's pair seeds (tests/soak/CMakeLists.txt) run a turn at a
# time (issue #53): a commit runs the regression seeds and every TURNS-th
# pair seed, by its commit count, so that TURNS commits in a row run every
# one (eight turns: 4 or 5 of the 39 a commit). Each pair seed adds pairs
# of scenario features no other one has;
# none of them ever failed (those that did are regression seeds, run by
# every commit).
TURNS = 8


def seeds_of_turn(seeds, turn, turns=TURNS):
    """The seeds at positions turn, turn + turns, ...; every seed for None."""
    return list(seeds) if turn is None else [s for i, s in enumerate(seeds) if i % turns == turn]


def turn_of_checkout(source, turns=TURNS):
    """(turn, why): HEAD's commit count modulo `turns` (its hash in a shallow
    clone, whose count says nothing); (None, why) where there is no git."""
    def git(*args):
        r = subprocess.run(["git", "-C", source, *args], capture_output=True, text=True,
                           stdin=subprocess.DEVNULL, timeout=60)
        return r.stdout.strip() if r.returncode == 0 else ""
    try:
        head = git("rev-parse", "HEAD")
        if not re.fullmatch(r"[0-9a-f]{40,64}", head):
            return None, "no git checkout at %s: every seed" % source
        if git("rev-parse", "--is-shallow-repository") == "true":
            return int(head, 16) % turns, "HEAD %s of a shallow clone, by its hash" % head[:10]
        count = git("rev-list", "--count", "HEAD")
        return int(count) % turns, "HEAD %s, commit %s" % (head[:10], count)
    except (OSError, ValueError, subprocess.TimeoutExpired) as e:
        return None, "git failed (%s): every seed" % e


def main():
    ap = argparse.ArgumentParser(description="Runs short torch jobs under the shim, each with a scenario drawn "
                                 "from its seed, and judges each against the same job without "
                                 "the shim.",
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="Replay a failure: --seed S --runs 1. See docs/soak.md.")
    ap.add_argument("--runs", type=int, default=40, help="how many runs (default 40)")
    ap.add_argument("--seed", type=int, default=1, help="the first run's seed (default 1)")
    ap.add_argument("--seeds", default="", help="comma-separated seeds instead of --seed/--runs")
    ap.add_argument("--rotate", default="",
                    help="comma-separated seeds run a turn at a time, after --seeds: this run takes "
                         "every --turns-th one from position --turn")
    ap.add_argument("--turns", type=int, default=TURNS, help="turns of --rotate (default %d)" % TURNS)
    ap.add_argument("--turn", default=os.environ.get("CHAKRASHIM_TEST_SOAK_TURN", "auto"),
                    help="auto (by the checkout's commit count, default; CHAKRASHIM_TEST_SOAK_TURN), "
                         "all, or a number below --turns")
    ap.add_argument("--keep", default="", help="copy each failed run's folder into DIR/seed-S")
    ap.add_argument("--quiet", action="store_true", help="print failures and the summary only")
    ap.add_argument("--print", action="store_true", help="print the scenarios, run nothing")
    ap.add_argument("--jobs", type=int, default=1,
                    help="runs at once (default 1); each run's time bound is relative to its twin's, "
                         "which runs under the same load")
    ap.add_argument("--minutes", type=float, default=0,
                    help="start no run after this many minutes (0: no limit)")
    ap.add_argument("--kind", default="", choices=[""] + [k for k, _ in KINDS],
                    help="only seeds that draw this job kind: --runs of them, from --seed up "
                         "(ddp2: a soak of 2-rank jobs); each still replays with --seed S --runs 1")
    try:
        a = ap.parse_args()
    except SystemExit as e:
        if e.code not in (0, None):
            print("soak: see --help", file=sys.stderr)
        raise
    if a.jobs < 1:
        print("soak: --jobs must be at least 1; see --help", file=sys.stderr)
        return 2
    if a.seeds:
        seeds = [int(x) for x in a.seeds.split(",") if x]
    elif a.kind:
        seeds, seed = [], a.seed
        while len(seeds) < a.runs:
            if draw(seed)["kind"] == a.kind:
                seeds.append(seed)
            seed += 1
    else:
        seeds = list(range(a.seed, a.seed + a.runs))
    if a.rotate:
        if a.turns < 1 or not (a.turn in ("auto", "all") or (a.turn.isdigit() and int(a.turn) < a.turns)):
            print("soak: --turn takes auto, all or a number below --turns (%d); see --help" % a.turns,
                  file=sys.stderr)
            return 2
        rotating = [int(x) for x in a.rotate.split(",") if x]
        if a.turn == "all":
            turn, why = None, "--turn all"
        elif a.turn == "auto":
            turn, why = turn_of_checkout(os.environ.get("CHAKRASHIM_TEST_SOURCE_DIR") or
                                         os.path.join(HERE, "..", ".."), a.turns)
        else:
            turn, why = int(a.turn), "--turn %s" % a.turn
        picked = seeds_of_turn(rotating, turn, a.turns)
        print("soak: %s of the %d rotating seeds (%s): %s" % (
            "all" if turn is None else "turn %d of %d, %d" % (turn, a.turns, len(picked)), len(rotating), why,
            ",".join(map(str, picked))) + ("" if turn is None else "; --turn all runs every one"), flush=True)
        seeds += picked
    if a.print:
        for seed in seeds:
            print(f"seed {seed}: {describe(draw(seed))}")
        return 0
    if not (PRELOAD and CLI):
        print("soak: CHAKRASHIM_TEST_PRELOAD and CHAKRASHIM_TEST_CLI must name the build's "
              "preload and CLI (scripts/soak.sh sets them); see --help", file=sys.stderr)
        return 2
    soak = Soak(keep=a.keep or None, quiet=a.quiet)
    failed, also, mix, groups, t0 = [], [], {}, {}, time.monotonic()
    drawn = []
    stop = []  # SIGTERM/SIGINT: finish the current run, then the summary
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.append(1))
    done = 0

    def report(i, seed, s, fails):
        if fails:
            failed.append(seed)
            groups.setdefault(signature(fails), []).append(seed)
            print(f"FAIL seed {seed} [{signature(fails)}]: {describe(s)}\n  replay: scripts/soak.sh --seed {seed} "
                  f"--runs 1\n  " + "\n  ".join(fails), flush=True)
        elif s.get("verdict"):
            # Not the shim's: printed (the soak's job or torch needs a fix),
            # counted apart, and no failure of the soak's exit status.
            also.append(seed)
            print(f"JOB  seed {seed} [{s['verdict']}]: {describe(s)}\n  replay: scripts/soak.sh --seed {seed} "
                  f"--runs 1\n  {s['verdict_detail']}", flush=True)
        elif not a.quiet:
            print(f"ok   seed {seed} ({s['secs']:.1f} s, run {i + 1}/{len(seeds)}): "
                  f"{describe(s)}", flush=True)
        if a.quiet and (i + 1) % 25 == 0:
            print(f"soak: {i + 1}/{len(seeds)} runs, {len(failed)} failed, "
                  + (f"{len(also)} {ALSO_WITHOUT}, " if also else "")
                  + f"{time.monotonic() - t0:.0f} s", flush=True)

    # Runs go --jobs at a time; results print as runs end, on this thread.
    running, finished = {}, [0]

    def drain(limit):
        """Reports the runs that end, until fewer than `limit` still run."""
        while running and len(running) >= limit:
            ended, _ = wait(running, return_when=FIRST_COMPLETED)
            for f in ended:
                report(finished[0], *running.pop(f), f.result())
                finished[0] += 1

    with ThreadPoolExecutor(max_workers=a.jobs) as pool:
        for seed in seeds:
            if stop or (a.minutes and time.monotonic() - t0 > a.minutes * 60):
                break
            drain(a.jobs)
            done += 1
            s = draw(seed)
            drawn.append(s)
            for k in ("kind", "fault", "folder", "dir_fault", "windows"):
                mix.setdefault(k, {}).setdefault(s[k], 0)
                mix[k][s[k]] += 1
            running[pool.submit(soak.run, s)] = (seed, s)
        drain(1)
    secs = time.monotonic() - t0
    print(f"soak: {done} runs, {len(failed)} failed, "
          + (f"{len(also)} {ALSO_WITHOUT}, " if also else "") + f"{secs:.0f} s"
          + (f" (stopped before {len(seeds)})" if done < len(seeds) else ""))
    for k, counts in mix.items():
        print(f"  {k}: " + ", ".join(f"{n} {c}" for n, c in sorted(counts.items())))
    # Whether the drawn windows were really taken: a trigger may come too
    # late for a short job, and a fault may come first.
    for mode in ("repeat", "on_demand"):
        runs = [s for s in drawn if s["windows"] == mode and "windows_written" in s]
        if runs:
            print(f"  {mode}: {sum(1 for s in runs if s['windows_written'])} of {len(runs)} runs wrote "
                  f"a window ({sum(s['windows_written'] for s in runs)} windows)")
    for sig, group in groups.items():
        print(f"  {len(group)} failed with [{sig}]: seeds " + ",".join(map(str, group)))
    if also:
        print(f"  {len(also)} {ALSO_WITHOUT} (the job's own; not counted as failed): seeds "
              + ",".join(map(str, also)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
