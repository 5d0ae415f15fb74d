"""Shared helpers for the Python-driven tests (preload, end-to-end, tools,
soak) and the benchmarks: the build's paths, a clean environment, running a
command, free ports and a job's ranks started by hand.

CTest passes the build's paths in CHAKRA_* environment variables (see
tests/preload/CMakeLists.txt). Jobs run with the real interpreter
(sys.executable): `python3` on PATH may be pyenv's shell shim, which the
preload would also enter.
"""
import atexit
import glob
import json
import os
import pty
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile

PYTHON = os.environ.get("CHAKRASHIM_TEST_PYTHON") or sys.executable
PRELOAD = os.environ.get("CHAKRASHIM_TEST_PRELOAD", "")
BRIDGE = os.environ.get("CHAKRASHIM_TEST_BRIDGE", "")
CLI = os.environ.get("CHAKRASHIM_TEST_CLI", "")
SOURCE_DIR = os.environ.get("CHAKRASHIM_TEST_SOURCE_DIR", "")
WITH_TORCH = os.environ.get("CHAKRASHIM_TEST_WITH_TORCH", "0") == "1"
# The golden pair (docs/trace-format.md, "Golden pair"): not in the
# repository; CMake's CHAKRA_GOLDEN_DIR says where it is (by default the
# team's shared fixtures folder beside the checkout).
GOLDEN_DIR = os.environ.get("CHAKRASHIM_TEST_GOLDEN_DIR") or os.path.join(
    SOURCE_DIR, "..", "shared", "fixtures", "chakra-link")

# A test started from a background shell (`cmd &` without job control)
# inherits SIGINT ignored, and so would every job it starts: CPython then
# installs no KeyboardInterrupt handler, the shim rightly leaves an ignored
# signal alone, and the tests that send SIGINT see nothing happen. Jobs get
# the disposition a terminal gives them.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def golden_missing(path):
    """The skip message of a test that needs the golden pair: where the data
    comes from, and how to point the tests at it."""
    return ("no golden pair at %s: it is the team's shared fixture (HTA's public trace "
            "nccl_data.json.gz, an ET made to match, and Chakra 1.0.0's chakra_trace_link "
            "output; docs/trace-format.md, \"Golden pair\"), kept beside the repository, not "
            "in it; configure with -DCHAKRA_GOLDEN_DIR=DIR to use a copy" % path)

# CHAKRASHIM_TEST_ONLY="FILE:WORD ...": in tests/*/test_FILE.py, run only
# the test methods whose names contain one of its WORDs (unittest's -k,
# added to the command line before unittest.main() reads it); a test file
# that no entry names runs whole. The sanitizer variants run their subsets
# this way (scripts/test-variants.sh); it also reruns one case of a CTest
# test in CTest's environment.
_script = os.path.basename(sys.argv[0])
for _entry in os.environ.get("CHAKRASHIM_TEST_ONLY", "").split():
    _file, _, _word = _entry.partition(":")
    if _word and _script == f"test_{_file}.py":
        sys.argv += ["-k", _word]

# Sanitizer variants (scripts/test-variants.sh). A job under the preload is
# an uninstrumented program, so the sanitizer runtime must come first in
# LD_PRELOAD: clean_env puts it there whenever a test sets LD_PRELOAD.
# Reports go to files in a folder of this test process (log_path), not to
# the job's stderr that tests compare, and a report makes the test fail at
# exit even where the job's exit code was not checked.
SANITIZER_RUNTIME = os.environ.get("CHAKRASHIM_TEST_PRELOAD_PREFIX", "")
SANITIZE = os.environ.get("CHAKRASHIM_TEST_SANITIZE", "")
_SAN_OPTIONS = ("ASAN_OPTIONS", "UBSAN_OPTIONS", "TSAN_OPTIONS")
_san_dir = None


def _collect_sanitizer_reports():
    reports = sorted(glob.glob(os.path.join(_san_dir, "*")))
    for path in reports:
        with open(path, errors="replace") as f:
            sys.stderr.write(f"==== sanitizer report {os.path.basename(path)}\n{f.read()}\n")
    shutil.rmtree(_san_dir, ignore_errors=True)
    if reports:
        sys.stderr.write(f"chakra_test: {len(reports)} sanitizer report(s): failing\n")
        sys.stderr.flush()
        os._exit(1)


if SANITIZE:
    _san_dir = tempfile.mkdtemp(prefix="chakra-san-")
    # The exit code is the test's evidence too: 66 is nobody's normal one.
    _base = {"ASAN_OPTIONS": "detect_leaks=1:exitcode=66",
             "UBSAN_OPTIONS": "print_stacktrace=1:halt_on_error=1:exitcode=66",
             # die_after_fork=0: DataLoader workers forked from a threaded job
             # (what e2e.fork tests) may start threads; TSan would kill them.
             "TSAN_OPTIONS": "exitcode=66:second_deadlock_stack=1:die_after_fork=0:suppressions="
                             + os.path.join(os.path.dirname(os.path.abspath(__file__)), "tsan.supp")}
    for _name, _value in _base.items():
        _extra = os.environ.get(_name, "")
        os.environ[_name] = ":".join(
            x for x in (_value, f"log_path={_san_dir}/report", _extra) if x)
    atexit.register(_collect_sanitizer_reports)


def _with_sanitizer_runtime(env):
    """A process under LD_PRELOAD gets the runtime first, and no leak check:
    CPython and torch keep memory until exit by design. Its writers get 300 s
    at exit unless the test says otherwise: instrumented at -O0, checking and
    writing a few thousand steps' files takes longer than the default 20 s of
    CHAKRA_EXIT_TIMEOUT, and the files would stay .partial (correctly, but
    the test is about something else)."""
    preload = env.get("LD_PRELOAD", "")
    if not (SANITIZER_RUNTIME and preload) or preload.startswith(SANITIZER_RUNTIME):
        return env
    env["LD_PRELOAD"] = f"{SANITIZER_RUNTIME}:{preload}"
    env["ASAN_OPTIONS"] = env.get("ASAN_OPTIONS", "") + ":detect_leaks=0"
    if "CHAKRA_PROFILE" in env:
        env.setdefault("CHAKRA_EXIT_TIMEOUT", "300")
    return env

# Launcher variables that the test machine may carry and that would change
# what a job under test does.
_LAUNCHER_VARS = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "OMPI_COMM_WORLD_RANK",
                  "OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE",
                  "MV2_COMM_WORLD_RANK", "MV2_COMM_WORLD_SIZE", "SLURM_PROCID",
                  "SLURM_NTASKS", "SLURM_JOB_ID", "TORCHELASTIC_RESTART_COUNT")


def clean_env(**extra):
    """The current environment without our or the launchers' variables,
    plus `extra` (a value of None removes the name)."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("CHAKRA_", "CHAKRASHIM_TEST_", "LD_PRELOAD"))
           and k not in _LAUNCHER_VARS}
    for k, v in extra.items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = str(v)
    return _with_sanitizer_runtime(env)


def run(cmd, env, timeout=120, **kw):
    """Runs cmd and returns the CompletedProcess with text output."""
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout, **kw)


def free_port():
    """A TCP port on the loopback that nothing uses now (a job's MASTER_PORT).

    Drawn below the kernel's ephemeral range (ip_local_port_range, 32768 and
    up by default), not by binding port 0: a port from that range is also
    what the kernel hands out as the source port of an outgoing connection,
    and gloo opens dozens on loopback, so another test's job took a port
    between this check and the store's listen once in CI (EADDRINUSE in
    init_process_group). Another test may still draw the same port (about 1
    in 12,000 per pair), which LauncherCase retries."""
    low = 32768
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            low = int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        pass
    high = max(min(low, 32768) - 1, 20001)
    rng = random.SystemRandom()
    for _ in range(200):
        port = rng.randrange(20000, high)
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    with socket.socket() as s:  # a crowded machine: the old way
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def torchrun(*args, nproc=2, elastic=False):
    """torchrun's command line for a job of nproc ranks on this host, its
    store on a free port. elastic: a c10d rendezvous, where a restart gets a
    fresh round (the static store would hand the second attempt the first
    attempt's gloo addresses)."""
    if elastic:
        where = ["--rdzv-backend", "c10d", "--rdzv-endpoint", f"127.0.0.1:{free_port()}", "--nnodes", "1"]
    else:
        where = ["--master-addr", "127.0.0.1", "--master-port", str(free_port())]
    return [PYTHON, "-m", "torch.distributed.run", "--nproc-per-node", str(nproc), *where, *args]


def start_ranks(cmd, env, world_size=2, **popen):
    """Starts cmd (a list, or a function of the rank that returns one) once
    for each rank of a job on this host, as a launcher would: env plus RANK,
    WORLD_SIZE, LOCAL_RANK, and MASTER_ADDR and MASTER_PORT of a free port on
    the loopback. Returns the processes, in rank order."""
    port = free_port()
    return [subprocess.Popen(cmd(rank) if callable(cmd) else cmd,
                             env={**{k: str(v) for k, v in env.items()}, "RANK": str(rank),
                                  "WORLD_SIZE": str(world_size), "LOCAL_RANK": str(rank),
                                  "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port)}, **popen)
            for rank in range(world_size)]


def gloo_could_not_connect(codes, outputs):
    """Whether ranks failed because gloo could not connect on the loopback
    (seen on loaded 2-core machines, with or without the shim): a launch
    flake to retry, not a verdict."""
    return any(c != 0 for c in codes) and any("Gloo connectFullMesh" in o for o in outputs)


def run_ranks_retrying_gloo(cmd, env, root, attempts=3, timeout=300, world_size=2):
    """start_ranks, waited for, retried from an empty `root` while gloo could
    not connect (at most `attempts` launches): (exit statuses, outputs)."""
    for attempt in range(attempts):
        if attempt:
            shutil.rmtree(root, ignore_errors=True)
            os.makedirs(root, exist_ok=True)
        procs = start_ranks(cmd, env, world_size=world_size,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        outputs = [p.communicate(timeout=timeout)[0] for p in procs]
        codes = [p.returncode for p in procs]
        if not gloo_could_not_connect(codes, outputs):
            break
    return codes, outputs


def capture_ddp_gloo(test, root, steps=6, start=2, end=4):
    """A 2-rank DDP job over gloo (tests/e2e/jobs/ddp_gloo.py) captured under
    the preload into `root`, steps start..end. Skips the test where gloo
    cannot connect on the loopback (seen on loaded machines, with or without
    the shim); any other failure fails it."""
    capture_gloo_job(test, root, "ddp_gloo.py", [str(steps)], start, end)


def capture_gloo_job(test, root, job_name, args, start=2, end=4, world_size=2):
    """capture_ddp_gloo for any gloo job of tests/e2e/jobs (its name and
    arguments), on `world_size` ranks. A capture the CTest fixture made
    (SHARED_CAPTURES) is copied instead. Returns the ranks' outputs."""
    codes, outputs = gloo_job_capture(root, job_name, args, start, end, world_size)
    if gloo_could_not_connect(codes, outputs):
        test.skipTest("gloo could not connect on loopback, three times (flaky on a loaded machine, with or "
                      "without the shim)")
    test.assertEqual(codes, [0] * world_size, "\n".join(outputs))
    return outputs


# Captures that several tests only read, made once per CTest run by the
# fixture fixtures.gloo_captures (tests/support/make_captures.py, issue #53:
# the tools' tests made the same 2-rank DDP capture four times and a
# pipeline's five, more where ASTRA-sim runs) into
# CHAKRASHIM_TEST_CAPTURES/NAME; each test copies one into its own
# folder. Run any other way (the file alone, no fixture, a fixture made by
# another build of the shim), a test makes its own.
SHARED_CAPTURES = {  # name: (job, arguments, start, end, ranks)
    "ddp2": ("ddp_gloo.py", ("6",), 2, 4, 2),
    "pipeline_gpipe": ("pipeline_gloo.py", ("5", "gpipe", "4"), 2, 4, 2),
    "pipeline_1f1b": ("pipeline_gloo.py", ("5", "1f1b", "4"), 2, 4, 2),
}
CAPTURES = os.environ.get("CHAKRASHIM_TEST_CAPTURES", "")
JOBS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e", "jobs")


def capture_stamp(job_name):
    """What a shared capture was made with: the preload and the libraries
    beside it (the bridge), and the job, each by size and modification
    time. A capture whose stamp differs from the current one is not used."""
    files = [os.path.join(JOBS_DIR, job_name), os.path.join(JOBS_DIR, "tiny_training.py")]
    lib_dir = os.path.dirname(os.path.realpath(PRELOAD))
    files += sorted(os.path.join(lib_dir, f) for f in os.listdir(lib_dir) if ".so" in f)
    stamp = []
    for f in files:
        try:
            st = os.stat(f)
            stamp.append([os.path.realpath(f), st.st_size, st.st_mtime_ns])
        except OSError:
            stamp.append([f, None, None])
    return stamp


def run_gloo_job(root, job_name, args, start, end, world_size, timeout=300):
    """The gloo job captured under the preload into `root` (relaunched while
    gloo cannot connect): (exit statuses, outputs)."""
    return run_ranks_retrying_gloo([PYTHON, os.path.join(JOBS_DIR, job_name), *args],
                                   clean_env(LD_PRELOAD=PRELOAD, CHAKRA_PROFILE=1, CHAKRA_TRACE_DIR=root,
                                             CHAKRA_START_STEP=start, CHAKRA_END_STEP=end), root,
                                   timeout=timeout, world_size=world_size)


def gloo_job_capture(root, job_name, args, start=2, end=4, world_size=2, timeout=300):
    """run_gloo_job, or a copy of the same capture from the fixture where it
    made one with this preload: (exit statuses, outputs)."""
    key = (job_name, tuple(str(a) for a in args), start, end, world_size)
    name = next((n for n, spec in SHARED_CAPTURES.items() if spec == key), None)
    if name and CAPTURES and PRELOAD:
        made = os.path.join(CAPTURES, name)
        try:
            with open(os.path.join(made, "made.json")) as f:
                record = json.load(f)
        except (OSError, ValueError):
            record = None
        if record and record["stamp"] == capture_stamp(job_name):
            os.makedirs(root, exist_ok=True)
            shutil.copytree(os.path.join(made, "trace"), root, symlinks=True, dirs_exist_ok=True)
            return record["codes"], record["outputs"]
    return run_gloo_job(root, job_name, args, start, end, world_size, timeout)


def run_on_pty(cmd, env):
    """Runs cmd with its stdout and stderr on a pseudo-terminal, as a user at
    a terminal runs it (isatty() is true: progress bars are drawn). Returns
    (exit status, everything it wrote, as text)."""
    pid, fd = pty.fork()
    if pid == 0:
        try:
            os.execve(cmd[0], cmd, env)
        finally:
            os._exit(127)  # never back into the test runner
    out = b""
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        out += chunk
    os.close(fd)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), out.decode(errors="replace")


def assert_rank_bar_on_terminal_only(test, cmd, verb, ranks):
    """The progress bar of link and convert (tools/common/progress.h): on a
    terminal, cmd draws "VERB [###...] n/RANKS ranks, T s, R ranks/s" in
    place and erases it; piped, it draws nothing. Returns the terminal's
    text for the caller's own checks."""
    status, text = run_on_pty(cmd, clean_env())
    test.assertEqual(status, 0, text)
    test.assertRegex(text, r"%s \[[#.]{30}\] \d+/%d ranks, [0-9.]+ s, [0-9.]+ ranks/s" % (re.escape(verb), ranks))
    test.assertIn("\r\x1b[K", text)  # redrawn in place, erased at the end
    piped = run(cmd, env=clean_env())
    test.assertEqual(piped.returncode, 0, piped.stdout + piped.stderr)
    test.assertNotIn("ranks/s", piped.stdout + piped.stderr)
    return text


def temp_dir(test):
    """A temporary folder removed when the test ends."""
    d = tempfile.TemporaryDirectory(prefix="chakra-test-")
    test.addCleanup(d.cleanup)
    return d.name


def require(test, condition, why):
    if not condition:
        test.skipTest(why)
