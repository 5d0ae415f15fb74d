"""Shared helpers for the Python-driven tests (preload and end-to-end).

CTest passes the build's paths in CHAKRA_* environment variables (see
tests/preload/CMakeLists.txt). Jobs run with the real interpreter
(sys.executable): `python3` on PATH may be pyenv's shell shim, which the
preload would also enter.
"""
import os
import subprocess
import sys
import tempfile

PYTHON = os.environ.get("CHAKRASHIM_TEST_PYTHON") or sys.executable
PRELOAD = os.environ.get("CHAKRASHIM_TEST_PRELOAD", "")
BRIDGE = os.environ.get("CHAKRASHIM_TEST_BRIDGE", "")
CLI = os.environ.get("CHAKRASHIM_TEST_CLI", "")
SOURCE_DIR = os.environ.get("CHAKRASHIM_TEST_SOURCE_DIR", "")
WITH_TORCH = os.environ.get("CHAKRASHIM_TEST_WITH_TORCH", "0") == "1"

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
    return env


def run(cmd, env, timeout=120, **kw):
    """Runs cmd and returns the CompletedProcess with text output."""
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout, **kw)


def temp_dir(test):
    """A temporary folder removed when the test ends."""
    d = tempfile.TemporaryDirectory(prefix="chakra-test-")
    test.addCleanup(d.cleanup)
    return d.name


def require(test, condition, why):
    if not condition:
        test.skipTest(why)
