"""Every `chakrashim` subcommand on every layout the shim writes (issue #38).

The layouts are made once, by real jobs under the preload, each with 1 and
with 2 ranks (two processes with RANK and WORLD_SIZE, as a launcher starts
them):
  fixed     ROOT/0_chakra, ROOT/0_kineto (1 rank: CHAKRA_GZIP=1)
  repeats   ROOT/step-1/0_chakra, ROOT/step-4/0_chakra, ...
  on demand ROOT/step-2/0_chakra ... (CHAKRA_TRIGGER_SIGNAL, the job's own signal)
  restart   the fixed layout, then a second run with TORCHELASTIC_RESTART_COUNT=1:
            ROOT/0_chakra.1 beside ROOT/0_chakra
Before #38, report exited 2 and link and convert said "no rank has both ..."
on the repeated and on-demand roots; a missing rank went unnoticed by link,
convert and report; check on a parent folder or on .et files said to check
the path and permissions; convert said "1 dropped as dangling"; trigger on
a finished job only said how to start one.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

from harness import CLI, JOBS, PRELOAD, PYTHON, RUN_MARKER, SOURCE_DIR, clean_env, run

CHAKRA_RUN = os.path.join(SOURCE_DIR, "scripts", "chakra-run")

LAYOUTS = ("fixed", "repeats", "on_demand", "restart")


def start(cmd, env, ranks):
    """cmd once per rank: alone without launcher variables for 1 rank, else
    with RANK and WORLD_SIZE as a launcher sets them. Waits; returns the
    CompletedProcess-like results in rank order."""
    procs = []
    run_id = f"layout-test-{os.getpid()}-{time.monotonic_ns()}"
    for rank in range(ranks):
        mine = dict(env)
        if ranks > 1:
            # CHAKRA_RUN_ID as chakra-run sets it: one for every rank.
            mine.update(RANK=str(rank), WORLD_SIZE=str(ranks), LOCAL_RANK=str(rank), CHAKRA_RUN_ID=run_id)
        procs.append(subprocess.Popen(cmd, env=mine, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    out = []
    for p in procs:
        stdout, stderr = p.communicate(timeout=300)
        out.append(subprocess.CompletedProcess(cmd, p.returncode, stdout, stderr))
    return out


def job_env(root, **settings):
    return clean_env(LD_PRELOAD=PRELOAD, CHAKRA_PROFILE=1, CHAKRA_TRACE_DIR=root, **settings)


def make_layout(kind, root, ranks):
    """Runs the job(s) that write `kind` into root; returns their results."""
    plain = [PYTHON, os.path.join(JOBS, "plain_loop.py")]
    if kind == "fixed":
        extra = {"CHAKRA_GZIP": 1} if ranks == 1 else {}
        return start(plain + ["5"], job_env(root, CHAKRA_START_STEP=2, CHAKRA_END_STEP=3, **extra), ranks)
    if kind == "repeats":
        return start(plain + ["6"], job_env(root, CHAKRA_START_STEP=1, CHAKRA_END_STEP=1, CHAKRA_REPEAT_EVERY=3),
                     ranks)
    if kind == "on_demand":
        paced = [PYTHON, os.path.join(JOBS, "paced_loop.py"), "6", "--step-ms", "5", "--signal-at", "1:USR1"]
        return start(paced, job_env(root, CHAKRA_ON_DEMAND=1, CHAKRA_TRIGGER_SIGNAL="USR1", CHAKRA_TRIGGER_STEPS=2),
                     ranks)
    if kind == "restart":
        return start(plain + ["5"], job_env(root, CHAKRA_START_STEP=2, CHAKRA_END_STEP=3,
                                            TORCHELASTIC_RESTART_COUNT=1), ranks)
    raise ValueError(kind)


def subcommands():
    """The subcommands `chakrashim --help` lists (tools/main.cpp's table), so
    that a new one is run here too."""
    r = run([CLI, "--help"], clean_env())
    block = r.stdout.split("commands:\n", 1)[1].split("\n\n", 1)[0]
    return [line.split()[0] for line in block.splitlines() if line.strip()]


# A stand-in for ASTRA-sim for `chakrashim simulate`: each NPU whose
# PREFIX.R.et exists finishes in 1 ms (the verdict is then the command's:
# 0 or 1, never 2).
ASTRA_STAND_IN = """#!/bin/sh
for a in "$@"; do case "$a" in --workload-configuration=*) prefix=${a#*=};; esac; done
r=0
while [ -f "$prefix.$r.et" ]; do echo "sys[$r] finished, 1000000 cycles"; r=$((r + 1)); done
"""


def named_paths(text):
    """The absolute paths a message names."""
    return [p.rstrip(".,;:)") for p in re.findall(r"(?:^|(?<=[\s(]))(/[^\s:;,()'\"]+)", text, re.M)]


def named_run_files(text):
    """The paths relative to a run's root that check prints (0_kineto/rank-0.json.gz)."""
    return re.findall(r"(?:^|(?<=\s))([\w+-]+_(?:chakra|kineto|linked|et)(?:\.\d+)?/[\w.+-]+)", text, re.M)


class EveryLayout(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="chakra-layouts-")
        cls.roots = {}
        for ranks in (1, 2):
            for kind in ("fixed", "repeats", "on_demand"):
                root = os.path.join(cls.tmp, f"{kind}-{ranks}")
                cls.check_ran(make_layout(kind, root, ranks), kind)
                cls.roots[(kind, ranks)] = root
            # A restart: the fixed layout, then a second attempt beside it.
            root = os.path.join(cls.tmp, f"restart-{ranks}")
            shutil.copytree(cls.roots[("fixed", ranks)], root)
            cls.check_ran(make_layout("restart", root, ranks), "restart")
            cls.roots[("restart", ranks)] = root

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    @staticmethod
    def check_ran(results, kind):
        for r in results:
            # The job's own lines tell why, in the failure.
            assert r.returncode == 0, f"{kind}: exit {r.returncode}\n{r.stderr}"

    def copy_of(self, kind, ranks):
        dest = os.path.join(tempfile.mkdtemp(prefix="chakra-layout-", dir=self.tmp), f"{kind}-{ranks}")
        shutil.copytree(self.roots[(kind, ranks)], dest)
        return dest

    def each_layout(self):
        """(kind, ranks, a fresh copy of that layout's root) for every layout."""
        return [(kind, ranks, self.copy_of(kind, ranks)) for kind in LAYOUTS for ranks in (1, 2)]

    def test_the_layouts_are_what_the_shim_writes(self):
        for kind, ranks, root in self.each_layout():
            with self.subTest(layout=kind, ranks=ranks):
                names = sorted(os.listdir(root))
                if kind in ("repeats", "on_demand"):
                    self.assertTrue(names and all(n.startswith("step-") for n in names), names)
                    inner = sorted(os.listdir(os.path.join(root, names[0])))
                    self.assertEqual(inner, ["0_chakra", "0_kineto"])
                elif kind == "restart":
                    self.assertEqual(names, ["0_chakra", "0_chakra.1", "0_kineto", "0_kineto.1"])
                else:
                    self.assertEqual(names, ["0_chakra", "0_kineto"])
                folder = os.path.join(root, *([names[0]] if kind in ("repeats", "on_demand") else []), "0_chakra")
                files = sorted(os.listdir(folder))
                # The run's mark (issue #49): every folder names the run
                # whose files it holds, as each file does.
                self.assertEqual(files, sorted([RUN_MARKER] + [f"rank-{r}.json" for r in range(ranks)]))
                with open(os.path.join(folder, RUN_MARKER)) as f:
                    run_id = f.read()
                with open(os.path.join(folder, "rank-0.json")) as f:
                    self.assertEqual(json.load(f)["chakrashim"]["run"], run_id)

    def astra_stand_in(self):
        path = os.path.join(tempfile.mkdtemp(prefix="astra-"), "AstraSim_Analytical_Congestion_Unaware")
        self.addCleanup(shutil.rmtree, os.path.dirname(path), True)
        with open(path, "w") as f:
            f.write(ASTRA_STAND_IN)
        os.chmod(path, 0o755)
        return path

    def test_every_subcommand_on_every_layout_never_exits_2_and_names_real_paths(self):
        commands = subcommands()
        self.assertTrue({"check", "link", "convert", "report", "trigger", "vars", "config"} <= set(commands),
                        commands)
        for kind, ranks, root in self.each_layout():
            with self.subTest(layout=kind, ranks=ranks):
                for command in commands:
                    if command == "vars":
                        args = [CLI, "vars"]
                    elif command == "config":
                        args = [CLI, "config", "--print"]
                    else:
                        args = [CLI, command, root]
                    env = clean_env(CHAKRA_PROFILE=1, CHAKRA_TRACE_DIR=root)
                    if command == "simulate":
                        env["ASTRA_SIM_BIN"] = self.astra_stand_in()
                    r = run(args, env, timeout=300)
                    text = r.stdout + r.stderr
                    self.assertNotEqual(r.returncode, 2, f"{' '.join(args)}:\n{text}")
                    if command == "simulate":
                        # Every run of the layout simulated; its 1 ms is no
                        # real verdict (a ratio beyond the band is status 1).
                        self.assertIn(r.returncode, (0, 1), f"{' '.join(args)}:\n{text}")
                        self.assertEqual(len(re.findall(r"ranks? simulated in", text)),
                                         {"repeats": 2, "restart": 2}.get(kind, 1), text)
                        continue
                    # A capture is there: only trigger (no job runs) may fail.
                    self.assertEqual(r.returncode, 1 if command == "trigger" else 0, f"{' '.join(args)}:\n{text}")
                    bases = [root] + [os.path.join(root, w) for w in os.listdir(root) if w.startswith("step-")]
                    for rel in named_run_files(text):
                        self.assertTrue(any(os.path.exists(os.path.join(b, rel)) for b in bases),
                                        f"{' '.join(args)} names {rel}, which is in no run of {root}:\n{text}")
                    for path in named_paths(text):
                        if command == "config":
                            # It names where the next run's files would go.
                            self.assertTrue(path.startswith(root), f"{path} in\n{text}")
                        else:
                            self.assertTrue(os.path.exists(path), f"{' '.join(args)} names {path}, which is not "
                                                                  f"there:\n{text}")
                    if command in ("link", "convert"):
                        self.assertNotIn("no rank has both", text)
                        self.assertRegex(text, r"%d ranks? (linked|converted), 0 failed" % (
                            ranks * {"repeats": 2, "restart": 2}.get(kind, 1)))

    def test_link_and_convert_write_beside_each_window_and_report_shows_each(self):
        for kind, ranks, root in self.each_layout():
            with self.subTest(layout=kind, ranks=ranks):
                if kind not in ("repeats", "on_demand"):
                    continue
                windows = sorted(os.listdir(root))
                r = run([CLI, "report", root], clean_env())
                self.assertEqual(r.returncode, 0, r.stderr)
                for w in windows:
                    self.assertIn(f"{w}/0", r.stdout)
                self.assertEqual(run([CLI, "link", root], clean_env()).returncode, 0)
                self.assertEqual(run([CLI, "convert", root], clean_env()).returncode, 0)
                for w in windows:
                    self.assertEqual(sorted(os.listdir(os.path.join(root, w, "0_linked"))),
                                     [f"rank-{r}.json" for r in range(ranks)])
                    self.assertEqual(sorted(os.listdir(os.path.join(root, w, "0_et"))),
                                     [f"rank.{r}.et" for r in range(ranks)])

    def test_a_missing_rank_is_said_by_link_convert_and_report(self):
        for kind, ranks, root in self.each_layout():
            with self.subTest(layout=kind, ranks=ranks):
                for d, _, files in os.walk(root):
                    for f in files:
                        if ranks == 2 and f.startswith("rank-1.json"):
                            os.remove(os.path.join(d, f))
                for command in ("link", "convert", "report"):
                    r = run([CLI, command, root], clean_env())
                    self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
                    warned = re.findall(r"warning: run (\S+): rank 1 of world size 2 has no files \(only rank 0 is "
                                        r"there\)", r.stderr)
                    if ranks == 1:
                        self.assertEqual(warned, [], r.stderr)
                    else:
                        # One line per run (each window, each restart's attempt).
                        runs = {"repeats": 2, "restart": 2}.get(kind, 1)
                        self.assertEqual(len(warned), runs, r.stderr)

    def test_check_on_a_parent_folder_says_what_it_found_and_what_it_expected(self):
        r = run([CLI, "check", self.tmp], clean_env())
        self.assertEqual(r.returncode, 1, r.stdout)
        self.assertNotIn("check the path and permissions", r.stdout)
        self.assertIn(f"no capture in {self.tmp} itself (expected JOB_chakra/ and JOB_kineto/ folders", r.stdout)
        self.assertIn("captures one level down: " + os.path.join(self.tmp, "fixed-1"), r.stdout)
        self.assertIn("windows of repeated or on-demand captures in " + os.path.join(self.tmp, "on_demand-1"),
                      r.stdout)

    def test_check_on_et_files_checks_them_as_chakra_protobuf(self):
        # Since issue #36 check reads convert's .et files (check/et_check.h);
        # before, it said "check the path and permissions" of them.
        for kind, ranks, root in self.each_layout():
            with self.subTest(layout=kind, ranks=ranks):
                self.assertEqual(run([CLI, "convert", root], clean_env()).returncode, 0)
                ets = sorted(os.path.join(d, f) for d, _, files in os.walk(root) for f in files if f.endswith(".et"))
                self.assertTrue(ets)
                for args in (ets[:1], [os.path.dirname(ets[0])]):
                    r = run([CLI, "check", *args], clean_env())
                    self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
                    self.assertRegex(r.stdout, r"chakrashim check: \d+ \.et files?, 0 errors")
                    self.assertNotIn("check the path and permissions", r.stdout)

    def test_convert_says_what_the_node_it_leaves_out_is(self):
        for kind, ranks, root in self.each_layout():
            with self.subTest(layout=kind, ranks=ranks):
                r = run([CLI, "convert", "--verbose", root], clean_env())
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertNotIn("dangling", r.stdout)
                self.assertIn("1 node left out, as chakra_converter does (no dependency to or from it): the ET's root, "
                              "harmless", r.stdout)

    def test_trigger_on_a_finished_job_says_the_job_is_gone(self):
        for kind, ranks, root in self.each_layout():
            with self.subTest(layout=kind, ranks=ranks):
                r = run([CLI, "trigger", root], clean_env())
                self.assertEqual(r.returncode, 1, r.stderr)
                self.assertIn(f"{root} holds no .chakrashim folder", r.stderr)
                if kind in ("on_demand", "repeats"):
                    self.assertIn(f"the job that wrote {root}/step-", r.stderr)
                    self.assertIn("has ended", r.stderr)
                else:
                    self.assertIn(f"the job that wrote {root}/0_chakra was not started with CHAKRA_ON_DEMAND=1",
                                  r.stderr)

    def test_gzip_compresses_the_device_trace_and_says_the_et_stays_plain(self):
        root = self.roots[("fixed", 1)]
        self.assertEqual(sorted(os.listdir(os.path.join(root, "0_kineto"))), [RUN_MARKER, "rank-0.json.gz"])
        with open(os.path.join(root, "0_chakra", "rank-0.json"), "rb") as f:
            self.assertEqual(f.read(1), b"{")  # plain JSON, as Chakra's linker reads it
        r = run([CLI, "vars"], clean_env())
        self.assertIn("CHAKRA_GZIP\n    write the device trace as rank-R.json.gz; the ET stays plain rank-R.json",
                      r.stdout)
        r = run([CLI, "config", "--print"], clean_env(CHAKRA_PROFILE=1, CHAKRA_TRACE_DIR=root, CHAKRA_GZIP=1))
        self.assertIn("the ET stays plain .json", r.stderr)


class OneRankSpeaks(unittest.TestCase):
    """With CHAKRA_RANKS=1, rank 1 captures and prints the capture line (it
    was silent: only rank 0 spoke at the default level, and rank 0 captured
    nothing)."""

    def test_the_only_capturing_rank_prints_the_capture_line(self):
        with tempfile.TemporaryDirectory(prefix="chakra-ranks1-") as root:
            r0, r1 = start([PYTHON, os.path.join(JOBS, "plain_loop.py"), "4"],
                           job_env(root, CHAKRA_START_STEP=1, CHAKRA_END_STEP=1, CHAKRA_RANKS=1), 2)
            self.assertEqual((r0.returncode, r1.returncode), (0, 0), r0.stderr + r1.stderr)
            self.assertIn("[chakrashim rank 1] captured steps [1]", r1.stderr)
            self.assertNotIn("captured", r0.stderr)


class ChakraRunMessages(unittest.TestCase):
    """chakra-run names its options, and the folders the capturing rank
    will write."""

    def chakra_run(self, *options):
        return run([CHAKRA_RUN, "--lib", PRELOAD, *options, "--", "true"], clean_env())

    def test_without_dir_it_names_the_option(self):
        r = self.chakra_run("--start", "2")
        self.assertEqual(r.returncode, 2)
        self.assertIn("chakra-run: --dir (CHAKRA_TRACE_DIR) is not set", r.stderr)

    def test_it_announces_the_folder_the_capturing_rank_writes(self):
        with tempfile.TemporaryDirectory(prefix="chakra-run-") as root:
            os.makedirs(os.path.join(root, "0_chakra"))
            open(os.path.join(root, "0_chakra", "rank-1.json"), "w").close()
            r = self.chakra_run("--start", "2", "--ranks", "1", "--dir", root)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn(f"traces to {root}/0_chakra.1 and 0_kineto.1", r.stderr)


class CaptureOff(unittest.TestCase):
    """CHAKRA_* variables without CHAKRA_PROFILE: capture is off, and the job
    hears it once."""

    def test_config_print_says_capture_is_off_and_what_the_rest_would_mean(self):
        r = run([CLI, "config", "--print"], clean_env(CHAKRA_START_STEP=3, CHAKRA_TRACE_DIR="/tmp/t"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("capture is off: CHAKRA_PROFILE is unset", r.stderr)
        self.assertIn("profile on; steps 3-3", r.stderr)

    def test_a_job_without_chakra_profile_says_so_once_at_exit(self):
        child = "import subprocess, sys; subprocess.run([sys.executable, '-c', 'pass']); print('done')"
        env = clean_env(LD_PRELOAD=PRELOAD, CHAKRA_START_STEP=3, CHAKRA_TRACE_DIR="/tmp/t")
        r = run([PYTHON, "-c", child], env)
        self.assertEqual((r.returncode, r.stdout), (0, "done\n"))
        lines = [l for l in r.stderr.splitlines() if "chakrashim" in l]
        self.assertEqual(len(lines), 1, r.stderr)  # the job, not its child
        self.assertIn("set, but not CHAKRA_PROFILE: capture was off, nothing was captured (set CHAKRA_PROFILE=1",
                      lines[0])
        for quiet in ({"CHAKRA_PROFILE": 0}, {"RANK": 1, "WORLD_SIZE": 2}):
            r = run([PYTHON, "-c", "pass"], clean_env(LD_PRELOAD=PRELOAD, CHAKRA_START_STEP=3, **quiet))
            self.assertEqual(r.stderr, "", quiet)
        # Misspelled (issue #49 case 11): the line names the near miss.
        r = run([PYTHON, "-c", "pass"], clean_env(LD_PRELOAD=PRELOAD, CHAKRA_PROFLE=1, CHAKRA_START_STEP=3))
        self.assertIn("CHAKRA_PROFLE is set, but not CHAKRA_PROFILE (did you mean CHAKRA_PROFILE?)", r.stderr)

    def test_the_line_at_exit_never_kills_a_process_whose_stderr_reader_is_gone(self):
        # A program other than Python keeps SIGPIPE's default action: with
        # the line at exit a plain write into a pipe nobody reads, `perl -e
        # 'exit 3'` died of SIGPIPE (-13) instead of exiting 3. (perl: it
        # leaves stderr open at exit; coreutils' programs close it first.)
        read_end, write_end = os.pipe()
        os.close(read_end)
        try:
            p = subprocess.run(["perl", "-e", "exit 3"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=write_end, timeout=60,
                               env=clean_env(LD_PRELOAD=PRELOAD, CHAKRA_START_STEP=3, CHAKRA_TRACE_DIR="/tmp/t"))
        finally:
            os.close(write_end)
        self.assertEqual(p.returncode, 3)


if __name__ == "__main__":
    unittest.main()
