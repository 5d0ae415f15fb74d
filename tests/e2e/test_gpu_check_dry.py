"""scripts/gpu-check.sh --dry (issue #8), as CI runs it (label gpu-dry).

The GPU check runs once, on a scarce GPU machine, so every part of it that a
CPU can run is proved here: its own syntax and usage, the tools it looks for,
the header-only deps folder it carries, configure and build with the very
flags of the GPU run (into a folder of its own), examples/train_cuda.py under
the freshly built shim and under torch.profiler (on the CPU), `chakrashim
check`, analyze.py's judgement in CPU mode and its self-test, and the packing
of the results into the three files that come back from the GPU machine.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import unittest

SOURCE = os.environ.get("CHAKRASHIM_TEST_SOURCE_DIR") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.environ.get("CHAKRASHIM_TEST_BUILD_DIR", "")
PYTHON = os.environ.get("CHAKRASHIM_TEST_PYTHON") or sys.executable
SCRIPT = os.path.join(SOURCE, "scripts", "gpu-check.sh")
PROGRESS = re.compile(r"^\[gpu-check \d\d:\d\d:\d\d \+\d+s\] ")


def script_env():
    """The environment without our variables, a preload, or the device
    tool's $OUT (which would switch on --pack by default)."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("CHAKRA_") and k not in ("LD_PRELOAD", "OUT")}
    env["PYTHONUNBUFFERED"] = "1"
    return env


def gpu_check(*args, timeout=120):
    return subprocess.run(["bash", SCRIPT, *args], env=script_env(), capture_output=True,
                          text=True, timeout=timeout, stdin=subprocess.DEVNULL)


class GpuCheckUsage(unittest.TestCase):
    def test_help_names_every_mode_and_exits_0(self):
        r = gpu_check("--help")
        self.assertEqual(r.returncode, 0, r.stderr)
        for word in ("--dry", "--prepare-deps", "--out DIR", "--window S E", "--pack", "--torch-min",
                     "--train-jobs", "--et-recorder", "--no-dry-compiled"):
            self.assertIn(word, r.stdout)

    def test_usage_errors_exit_2_with_one_line(self):
        for args, text in ((["--bogus"], "unknown option --bogus"),
                           (["--steps", "ten"], "'ten' is not a number"),
                           (["--dry", "--window", "1", "1"], "need 2 <= S <= E"),
                           (["--dry", "--steps", "6", "--window", "4", "5"], "a few steps after E"),
                           (["--dry", "--train-jobs", "eager,jit"], "unknown job 'jit'"),
                           (["--dry", "--et-recorder", "kineto"], "--et-recorder takes native or torch")):
            r = gpu_check(*args)
            self.assertEqual(r.returncode, 2, (args, r.stdout, r.stderr))
            self.assertIn(text, r.stderr)
            self.assertEqual(r.stdout, "")

    def test_prepare_deps_copies_once_then_reuses(self):
        deps = os.path.join(tempfile.mkdtemp(prefix="gpu-check-deps-"), ".gpu-deps")
        self.addCleanup(shutil.rmtree, os.path.dirname(deps), ignore_errors=True)
        first = gpu_check("--prepare-deps", "--deps", deps)
        self.assertEqual(first.returncode, 0, first.stdout + first.stderr)
        self.assertIn("deps: copied spdlog, fmt, nlohmann and zlib's headers", first.stdout)
        for f in ("spdlog/spdlog.h", "fmt/format-inl.h", "nlohmann/json.hpp", "zlib.h", "zconf.h"):
            self.assertTrue(os.path.isfile(os.path.join(deps, "include", f)), f)
        second = gpu_check("--prepare-deps", "--deps", deps)
        self.assertEqual(second.returncode, 0, second.stdout + second.stderr)
        self.assertIn("deps: using %s/include" % deps, second.stdout)


class GpuCheckDry(unittest.TestCase):
    def test_dry_run_builds_with_the_gpu_flags_runs_the_pipeline_on_cpu_and_packs(self):
        # Beside the main build, kept between runs so that a rerun rebuilds
        # only what changed.
        work = os.path.join(BUILD, "tests", "e2e", "gpu-check-dry") if BUILD else tempfile.mkdtemp()
        out = os.path.join(work, "out")
        shutil.rmtree(out, ignore_errors=True)
        r = gpu_check("--dry", "--out", out, "--build", os.path.join(work, "build"),
                      "--deps", os.path.join(work, "deps"), "--python", PYTHON, "--pack", timeout=1140)
        self.assertEqual(r.returncode, 0, r.stdout[-8000:] + r.stderr[-4000:])
        lines = r.stdout.splitlines()
        # One line per job, then the overall verdict.
        summary = [l for l in lines if l.startswith("gpu-check: ")]
        self.assertEqual(len(summary), 4, "\n".join(summary))
        eager, compiled, graphs, overall = summary
        self.assertRegex(eager, r"^gpu-check: PASS kernels=0 memcpys=0 ext_cov=n/a rf_join=100\.00% dropped=0 "
                                r"launches_outside_step=0 gpu_before_launch=0 count_diff_max=0\.00% "
                                r"step_ms before/inside/after shim=[\d.]+/[\d.]+/[\d.]+ "
                                r"profiler=[\d.]+/[\d.]+/[\d.]+ ratio_after=[\d.]+ .*mode=cpu job=eager$")
        self.assertRegex(compiled, r"^gpu-check: PASS kernels=0 .* rf_join=100\.00% .*mode=cpu job=compiled$")
        self.assertEqual(graphs, "gpu-check: n/a job=graphs (CPU: CUDA graphs need a GPU)")
        self.assertEqual(overall, "gpu-check: PASS jobs eager=PASS compiled=PASS graphs=n/a(CPU) "
                                  "mode=dry et_recorder=native")
        self.assertEqual(lines[-1], overall)
        progress = [l for l in lines if not l.startswith("gpu-check: ")]
        self.assertTrue(progress and all(PROGRESS.match(l) for l in progress), "\n".join(progress))
        for step in ("cmake: cmake version", "python: ", "torch: ", "deps: ", "configure: cmake -S",
                     "-DCHAKRA_BUILD_TESTS=OFF", "-DCHAKRA_HEADER_DEPS_DIR=", "-DZLIB_INCLUDE_DIR=",
                     "build: done", "[eager] shim run: ", "captured steps [4-5]", "[eager] torch.profiler run:",
                     "[compiled] shim run: ", "[compiled] torch.profiler run:", "[graphs] n/a (CPU)",
                     "analyze.py self-test: OK", "done in "):
            self.assertIn(step, r.stdout)

        # What comes back from the GPU machine: three files, the run inside.
        self.assertEqual(sorted(os.listdir(out)), ["gpu-check.log", "results.tar.gz", "summary.txt"])
        with open(os.path.join(out, "summary.txt")) as f:
            self.assertEqual(f.read().splitlines(), summary)
        with open(os.path.join(out, "gpu-check.log")) as f:
            log = f.read()
        self.assertIn("build: done", log)
        self.assertTrue(log.rstrip("\n").endswith("\n".join(summary)))
        with tarfile.open(os.path.join(out, "results.tar.gz")) as tar:
            names = set(tar.getnames())
            for member in ("run/shim/gpucheck_chakra/rank-0.json", "run/shim/gpucheck_kineto/rank-0.json",
                           "run/profiler/trace.json", "run/check.json", "run/analysis.json",
                           "run/shim_times.json", "run/profiler_times.json", "run/logs/configure.log",
                           "run/logs/build.log", "run/logs/shim-run.log", "run/logs/self-test.log",
                           "run/compiled/shim/gpucheck_chakra/rank-0.json", "run/compiled/profiler/trace.json",
                           "run/compiled/check.json", "run/compiled/analysis.json",
                           "run/logs/compiled-shim-run.log", "run/logs/compiled-profiler-run.log"):
                self.assertIn(member, names)
            self.assertFalse([n for n in names if n.startswith("run/graphs")])
            for prefix, job in (("run/", "eager"), ("run/compiled/", "compiled")):
                analysis = json.load(tar.extractfile(prefix + "analysis.json"))
                times = json.load(tar.extractfile(prefix + "shim_times.json"))
                self.assertTrue(analysis["pass"], analysis["failures"])
                self.assertEqual(analysis["check"]["errors"], 0)
                self.assertEqual(len(times["step_ms"]), 10)
                self.assertEqual(times["job"], job)


if __name__ == "__main__":
    unittest.main()
