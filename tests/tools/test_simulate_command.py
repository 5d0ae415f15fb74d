"""`chakrashim simulate` (issue #50, item 6): a capture, or convert's .et
files, through ASTRA-sim, each rank's simulated time beside the window it
captured, a warning beyond +-15%.

Runs everywhere with a stand-in for ASTRA-sim (a script that records what it
was given, checks the files it was pointed at, and prints the "sys[R]
finished, N cycles" lines the test asks for), against one real 2-rank DDP
capture over gloo; and with ASTRA-sim itself where ASTRA_SIM_BIN names its
binary (skipped, and said, where it does not).
"""
import json
import os
import re
import shutil
import stat
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "support"))
import chakra_test as ct  # noqa: E402

DUMP = os.environ.get("CHAKRASHIM_TEST_ET_DUMP", "")
PRELOAD = os.environ.get("CHAKRASHIM_TEST_PRELOAD", "")
ASTRA = os.environ.get("ASTRA_SIM_BIN", "")

# The stand-in: FAKE_ASTRA_CYCLES is "rank:cycles,..." (a rank left out
# prints no line), FAKE_ASTRA_SAY what to print besides, FAKE_ASTRA_EXIT its
# status; what it was given goes to FAKE_ASTRA_RECORD as JSON.
FAKE = r'''
import json, os, sys
args = dict(a[2:].split("=", 1) for a in sys.argv[1:] if a.startswith("--") and "=" in a)
prefix = args["workload-configuration"]
record = {"args": args, "cwd": os.getcwd(), "ranks": {}, "system": open(args["system-configuration"]).read(),
          "network": open(args["network-configuration"]).read()}
r = 0
while os.path.exists("%s.%d.et" % (prefix, r)):
    with open("%s.%d.et" % (prefix, r), "rb") as f:
        record["ranks"][r] = f.read().hex()
    r += 1
with open(os.environ["FAKE_ASTRA_RECORD"], "w") as f:
    json.dump(record, f)
print(os.environ.get("FAKE_ASTRA_SAY", ""))
for item in filter(None, os.environ.get("FAKE_ASTRA_CYCLES", "").split(",")):
    rank, cycles = item.split(":")
    print("[2026-12-06 10:00:00.000] [workload] [info] sys[%s] finished, %s cycles, exposed communication 0 cycles."
          % (rank, cycles))
sys.exit(int(os.environ.get("FAKE_ASTRA_EXIT", "0")))
'''


def et_metadata(path):
    """convert's GlobalMetadata attributes of one .et, by name."""
    import subprocess
    r = subprocess.run([DUMP, path], capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        raise AssertionError("chakrashim_et_dump %s: %s" % (path, r.stderr))
    meta = json.loads(r.stdout.splitlines()[0])
    return {a[0]: a[2] for a in meta["attr"]}


def profiler_steps_ns(root, rank):
    """{step: dur ns} of a rank's ProfilerStep#N spans in the capture."""
    with open(os.path.join(root, "0_kineto", "rank-%d.json" % rank)) as f:
        trace = json.load(f)
    out = {}
    for e in trace["traceEvents"]:
        m = re.match(r"ProfilerStep#(\d+)$", e.get("name", ""))
        if m and e.get("ph") == "X":
            out[int(m.group(1))] = round(float(e["dur"]) * 1000)
    return out


@unittest.skipUnless(ct.WITH_TORCH and PRELOAD and DUMP, "needs torch, the preload and chakrashim_et_dump")
class SimulateCommand(unittest.TestCase):
    """Against the stand-in: what simulate hands ASTRA-sim and what it says."""

    @classmethod
    def setUpClass(cls):
        cls.base = tempfile.mkdtemp(prefix="chakra-simulate-")
        cls.capture = os.path.join(cls.base, "ddp")
        # A TestCase's skipTest raises SkipTest, which skips the class here.
        ct.capture_ddp_gloo(unittest.TestCase(), cls.capture, steps=6, start=2, end=4)
        cls.fake = os.path.join(cls.base, "AstraSim_Analytical_Congestion_Unaware")
        with open(cls.fake, "w") as f:
            f.write("#!%s\n%s" % (sys.executable, FAKE))
        os.chmod(cls.fake, stat.S_IRWXU)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.base, ignore_errors=True)

    def setUp(self):
        self.root = ct.temp_dir(self)
        self.record = os.path.join(self.root, "record.json")
        self.tmp = os.path.join(self.root, "tmp")
        os.makedirs(self.tmp)

    def copy_capture(self):
        root = os.path.join(self.root, "traces")
        shutil.copytree(self.capture, root)
        return root

    def simulate(self, *args, cycles=None, say="", exit_status=0, path_has_fake=False, env=None):
        e = ct.clean_env(FAKE_ASTRA_RECORD=self.record, FAKE_ASTRA_SAY=say, FAKE_ASTRA_EXIT=exit_status,
                         TMPDIR=self.tmp,
                         FAKE_ASTRA_CYCLES=",".join("%d:%d" % kv for kv in (cycles or {}).items()))
        if path_has_fake:
            e["PATH"] = os.path.dirname(self.fake) + ":" + e.get("PATH", "")
            e.pop("ASTRA_SIM_BIN", None)  # the caller's, where the suite runs with a real one
        else:
            e["ASTRA_SIM_BIN"] = self.fake
        e.update(env or {})
        return ct.run([ct.CLI, "simulate", *args], env=e, timeout=300)

    def given(self):
        with open(self.record) as f:
            return json.load(f)

    def expected_ns(self, et):
        meta = et_metadata(et)
        return meta["chakrashim_window_ns"] - meta["chakrashim_cost_taken_ns"]

    def rows(self, out):
        return {int(m.group(1)): m.group(2) for m in re.finditer(r"^ +(\d+) +(\S.*)$", out, re.M)}

    def test_a_capture_is_converted_then_simulated_on_its_fitted_network(self):
        root = self.copy_capture()
        # First the conversion alone, for the figures the stand-in returns.
        r = ct.run([ct.CLI, "convert", root], env=ct.clean_env(), timeout=300)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        et = os.path.join(root, "0_et", "rank.%d.et")
        expected = {rank: self.expected_ns(et % rank) for rank in (0, 1)}
        # The window convert wrote is the capture's ProfilerStep#N spans.
        for rank in (0, 1):
            meta = et_metadata(et % rank)
            steps = profiler_steps_ns(root, rank)
            self.assertEqual(meta["chakrashim_window_steps"], len(steps))
            self.assertAlmostEqual(meta["chakrashim_window_ns"], sum(steps.values()), delta=len(steps))
        shutil.rmtree(os.path.join(root, "0_et"))
        r = self.simulate(root, cycles={0: expected[0] * 1.05, 1: expected[1] * 0.9})
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("chakrashim convert: 2 ranks converted", r.stdout)
        rows = self.rows(r.stdout)
        self.assertTrue(rows[0].endswith(" 1.050"), r.stdout)
        self.assertTrue(rows[1].endswith(" 0.900"), r.stdout)
        self.assertNotIn("warning", r.stdout)
        self.assertIn("2 of 2 ranks simulated", r.stdout)
        self.assertIn("each within 15% of its expected window", r.stdout)
        given = self.given()
        prefix = os.path.join(os.path.realpath(root), "0_et", "rank")
        self.assertEqual(os.path.realpath(given["args"]["workload-configuration"]), prefix)
        self.assertEqual(os.path.realpath(given["args"]["network-configuration"]), prefix + ".network.yml")
        self.assertIn("Fitted by chakrashim convert", given["network"])
        self.assertEqual(json.loads(given["system"])["all-reduce-implementation"], ["ring"])
        self.assertEqual(sorted(given["ranks"]), ["0", "1"])
        # ASTRA-sim ran in a folder of its own, removed after a clean run.
        self.assertTrue(given["cwd"].startswith(os.path.realpath(self.tmp)), given["cwd"])
        self.assertEqual(os.listdir(self.tmp), [])

    def test_a_rank_beyond_the_band_or_unfinished_is_a_warning_and_status_1(self):
        root = self.copy_capture()
        self.assertEqual(ct.run([ct.CLI, "convert", root], env=ct.clean_env(), timeout=300).returncode, 0)
        folder = os.path.join(root, "0_et")
        expected = self.expected_ns(os.path.join(folder, "rank.0.et"))
        expected_1 = self.expected_ns(os.path.join(folder, "rank.1.et"))
        r = self.simulate(folder, cycles={0: expected * 1.5})
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertNotIn("chakrashim convert", r.stdout)  # the .et were there: not converted again
        self.assertRegex(r.stdout, r"warning: rank 0 simulated to 1\.500 of its expected window \(captured [0-9.]+ ms "
                                   r"less [0-9.]+ (ms|us) of recording cost\): beyond ±15%")
        self.assertIn("warning: rank 1 did not finish in ASTRA-sim", r.stdout)
        # Kept for a look, and said where.
        kept = re.search(r"ASTRA-sim's configuration and output \(astra-sim.log\) are in (\S+)", r.stdout)
        self.assertTrue(kept and os.path.exists(os.path.join(kept.group(1), "astra-sim.log")), r.stdout)
        # A wider band accepts rank 0.
        # (Each rank against its own expected window: a loaded capture's ranks
        # differ, 4.5 ms against 11 ms once in CI.)
        r = self.simulate(folder, "--tolerance", "60", cycles={0: expected * 1.5, 1: expected_1})
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)

    def test_astra_sim_that_fails_shows_its_last_lines(self):
        root = self.copy_capture()
        r = self.simulate(root, say="[Error] (network/analytical) bad file: x.yml", exit_status=255)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("ASTRA-sim ended (exit status 255) without finishing a rank; its last lines:", r.stdout)
        self.assertIn("  [Error] (network/analytical) bad file: x.yml", r.stdout)

    def test_astra_sim_is_found_on_path_or_the_command_says_how_to_get_it(self):
        root = self.copy_capture()
        r = self.simulate(root, cycles={0: 1, 1: 1}, path_has_fake=True)
        self.assertIn(self.fake, r.stdout)  # found on PATH
        shutil.rmtree(os.path.join(root, "0_et"))
        e = ct.clean_env(PATH="/usr/bin:/bin")
        e.pop("ASTRA_SIM_BIN", None)
        r = ct.run([ct.CLI, "simulate", root], env=e, timeout=60)
        self.assertEqual(r.returncode, 2)
        self.assertEqual(r.stdout, "")
        self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)
        self.assertIn("no ASTRA-sim: give its binary with --astra-sim or ASTRA_SIM_BIN", r.stderr)
        self.assertFalse(os.path.exists(os.path.join(root, "0_et")), "nothing converted without ASTRA-sim")
        r = ct.run([ct.CLI, "simulate", root, "--astra-sim", os.path.join(self.root, "nope")], env=e, timeout=60)
        self.assertEqual(r.returncode, 2)
        self.assertIn("is not an executable file", r.stderr)

    def test_one_rank_runs_as_two_npus_and_reports_one(self):
        root = self.copy_capture()
        self.assertEqual(ct.run([ct.CLI, "convert", root], env=ct.clean_env(), timeout=300).returncode, 0)
        one = os.path.join(self.root, "one")
        os.makedirs(one)
        shutil.copy(os.path.join(root, "0_et", "rank.0.et"), os.path.join(one, "job.0.et"))
        expected = self.expected_ns(os.path.join(one, "job.0.et"))
        r = self.simulate(one, cycles={0: expected, 1: expected * 3})
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("rank 0 runs as two NPUs", r.stdout)
        self.assertIn("a ring of 2 at 50 GB/s and 500 ns (one rank: no network to fit)", r.stdout)
        rows = self.rows(r.stdout)
        self.assertEqual(sorted(rows), [0], r.stdout)
        self.assertTrue(rows[0].endswith(" 1.000"), r.stdout)
        given = self.given()
        self.assertEqual(given["ranks"]["0"], given["ranks"]["1"])
        self.assertIn("npus_count: [ 2 ]", given["network"])

    def test_files_without_a_window_are_simulated_and_said_unjudged(self):
        root = self.copy_capture()
        r = ct.run([ct.CLI, "convert", root, "--chakra-exact"], env=ct.clean_env(), timeout=300)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertNotIn("chakrashim_window_ns", et_metadata(os.path.join(root, "0_et", "rank.0.et")))
        r = self.simulate(os.path.join(root, "0_et"), cycles={0: 5, 1: 5})
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("warning: rank 0's .et has no captured window", r.stdout)
        self.assertNotIn("each within", r.stdout)

    def test_a_missing_rank_or_two_sets_are_refused_before_astra_sim(self):
        root = self.copy_capture()
        self.assertEqual(ct.run([ct.CLI, "convert", root], env=ct.clean_env(), timeout=300).returncode, 0)
        folder = os.path.join(root, "0_et")
        shutil.copy(os.path.join(folder, "rank.1.et"), os.path.join(folder, "rank.3.et"))
        r = self.simulate(folder)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("rank.2.et is missing: ASTRA-sim needs a file for every rank from 0 to 3", r.stderr)
        self.assertFalse(os.path.exists(self.record))
        os.remove(os.path.join(folder, "rank.3.et"))
        shutil.copy(os.path.join(folder, "rank.0.et"), os.path.join(folder, "other.0.et"))
        r = self.simulate(folder)
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn("holds more than one set of .et files", r.stderr)
        r = self.simulate(folder, "--prefix", os.path.join(folder, "rank"), cycles={0: 1, 1: 1})
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)  # 1 ns: beyond the band
        self.assertIn("2 of 2 ranks simulated", r.stdout)

    def test_help(self):
        r = ct.run([ct.CLI, "simulate", "--help"], env=ct.clean_env(), timeout=60)
        self.assertEqual(r.returncode, 0)
        self.assertIn("usage: chakrashim simulate [options] DIR", r.stdout)
        self.assertIn("simulate", ct.run([ct.CLI, "--help"], env=ct.clean_env(), timeout=60).stdout)


@unittest.skipUnless(ct.WITH_TORCH and PRELOAD, "needs torch and the preload")
class WithAstraSim(unittest.TestCase):
    """ASTRA-sim itself, where ASTRA_SIM_BIN names it: every rank finishes
    and gets a ratio (its size is the machine's to decide: not judged)."""

    def test_a_ddp_capture_simulates_every_rank(self):
        if not ASTRA:
            print("\nSKIPPED: ASTRA-sim was not run: ASTRA_SIM_BIN is not set (docs/simulate.md)", file=sys.stderr)
            self.skipTest("ASTRA_SIM_BIN is not set")
        root = ct.temp_dir(self)
        ct.capture_ddp_gloo(self, root, steps=6, start=2, end=4)
        r = ct.run([ct.CLI, "simulate", root], env=ct.clean_env(ASTRA_SIM_BIN=ASTRA), timeout=600)
        print(r.stdout, file=sys.stderr)
        self.assertIn(r.returncode, (0, 1), r.stdout + r.stderr)
        self.assertIn("2 of 2 ranks simulated", r.stdout)
        self.assertRegex(r.stdout, r"(?m)^ +0 .* [0-9]\.[0-9]{3}$")
        self.assertRegex(r.stdout, r"(?m)^ +1 .* [0-9]\.[0-9]{3}$")


if __name__ == "__main__":
    unittest.main()
