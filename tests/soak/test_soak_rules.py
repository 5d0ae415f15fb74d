"""The soak's pure rules (tests/soak/soak.py): what a seed draws and how the
windows a run may have finished are counted. Fast; runs no job."""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import soak  # noqa: E402

# A seed's draw takes one more number where the libcupti double is built
# (CTest and soak.sh name it): pin the draws as they run there, also when
# this file runs alone.
soak.FAKE_CUPTI = soak.FAKE_CUPTI or "/libfake_cupti.so"


class Draw(unittest.TestCase):
    def test_regression_seeds_keep_the_scenarios_they_failed_with(self):
        # Pinned: the windows draw (seeds from 20000) must not move these.
        self.assertEqual(soak.describe(soak.draw(10307)),
                         "kind=ddp2 steps=5 fault=usr1x2 at=0 where=out gap_ms=0 folder=absolute "
                         "dir_fault=full@3 START_STEP=1 END_STEP=3 GZIP=1 EXIT_TIMEOUT=5 "
                         "FLUSH_SIGNAL=USR1")
        self.assertEqual(soak.describe(soak.draw(1)),
                         "kind=plain steps=5 fault=none at=2 where=out gap_ms=20 folder=relative "
                         "dir_fault=none@1 START_STEP=5 END_STEP=8 MAX_MEMORY=4K EXIT_TIMEOUT=2 "
                         "FLUSH_SIGNAL=USR1")
        for seed in range(0, soak.WINDOWS_FROM_SEED, 997):
            self.assertEqual(soak.draw(seed)["windows"], "fixed")

    def test_windows_from_20000_follow_the_configuration_rules(self):
        modes = set()
        for seed in range(soak.WINDOWS_FROM_SEED, soak.WINDOWS_FROM_SEED + 300):
            s = soak.draw(seed)
            modes.add(s["windows"])
            e = s["env"]
            if s["windows"] == "repeat":
                length = e["CHAKRA_END_STEP"] - e["CHAKRA_START_STEP"] + 1
                self.assertGreater(e["CHAKRA_REPEAT_EVERY"], length, seed)  # a step between
                self.assertGreaterEqual(e.get("CHAKRA_REPEAT_UNTIL", 10 ** 9), e["CHAKRA_END_STEP"])
            elif s["windows"] == "on_demand":
                self.assertNotIn("CHAKRA_START_STEP", e)
                self.assertNotIn("CHAKRA_END_STEP", e)
                self.assertEqual(e["CHAKRA_ON_DEMAND"], 1)
                self.assertIn(s["trigger_in"], (5, 7, 9))
            self.assertEqual(soak.draw(seed), s, "a replay draws the same")
        self.assertEqual(modes, {"fixed", "repeat", "on_demand"})


class WindowsDone(unittest.TestCase):
    def scenario(self, windows="fixed", **env):
        return {"windows": windows, "env": env}

    def test_a_fixed_window(self):
        s = self.scenario(CHAKRA_START_STEP=2, CHAKRA_END_STEP=3)
        self.assertEqual([soak.cycles_done_by(s, k) for k in range(6)], [0, 0, 0, 1, 1, 1])

    def test_repeats_count_each(self):
        s = self.scenario("repeat", CHAKRA_START_STEP=2, CHAKRA_END_STEP=3, CHAKRA_REPEAT_EVERY=4)
        self.assertEqual([soak.cycles_done_by(s, k) for k in range(12)],
                         [0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3])

    def test_repeats_with_cycles_stop_at_repeat_until(self):
        s = self.scenario("repeat", CHAKRA_START_STEP=1, CHAKRA_END_STEP=4, CHAKRA_WARMUP_STEPS=1,
                          CHAKRA_ACTIVE_STEPS=1, CHAKRA_REPEAT_EVERY=5, CHAKRA_REPEAT_UNTIL=9)
        self.assertEqual([soak.cycles_done_by(s, k) for k in range(16)],
                         [0, 0, 1, 1, 2, 2, 2, 3, 3, 4, 4, 4, 4, 4, 4, 4])

    def test_a_memory_cap_may_end_a_window_in_any_of_its_steps(self):
        # Seed 12644: the cap cut the window 3-5 in step 3, the job called
        # os._exit after step 3, and the window's files were final.
        s = soak.draw(12644)
        self.assertEqual((s["fault"], s["at"], s["env"]["CHAKRA_START_STEP"], s["env"]["CHAKRA_END_STEP"],
                          s["env"]["CHAKRA_MAX_MEMORY"]), ("os_exit", 3, 3, 5, "16K"))
        self.assertEqual(soak.cycles_done_by(s, 3), 1)
        # Also the cycle that begins at the next step: the ops after a step's
        # optimizer step count in the next one, and the cap may cut it there,
        # before the fault (seed 560016: window 2-4 cut by loss.item() after
        # step 1's optimizer step, then os._exit at step 1).
        self.assertEqual(soak.cycles_done_by(soak.draw(560016), 1), 1)
        s = self.scenario(CHAKRA_START_STEP=2, CHAKRA_END_STEP=4, CHAKRA_MAX_MEMORY="4K")
        self.assertEqual([soak.cycles_done_by(s, k) for k in range(6)], [0, 1, 1, 1, 1, 1])
        s = self.scenario("repeat", CHAKRA_START_STEP=1, CHAKRA_END_STEP=4, CHAKRA_WARMUP_STEPS=1,
                          CHAKRA_ACTIVE_STEPS=1, CHAKRA_REPEAT_EVERY=5, CHAKRA_REPEAT_UNTIL=9,
                          CHAKRA_MAX_MEMORY="4K")
        self.assertEqual([soak.cycles_done_by(s, k) for k in range(12)],
                         [0, 1, 1, 2, 2, 2, 3, 3, 4, 4, 4, 4])

    def test_on_demand_has_no_bound(self):
        self.assertIsNone(soak.cycles_done_by(self.scenario("on_demand", CHAKRA_ON_DEMAND=1), 5))

    def test_capture_roots(self):
        self.assertEqual(soak.capture_root(os.path.join("step-12", "0_chakra", "rank-0.json")), "step-12")
        self.assertEqual(soak.capture_root(os.path.join("0_chakra", "rank-0.json")), "")
        self.assertEqual(soak.capture_root(os.path.join("step-x", "0_chakra", "rank-0.json")), "")


class Verdict(unittest.TestCase):
    """Whom a run that ended unlike its twin blames (seed 90225): runs no
    job; `execute` is replaced by one that says how each run ended."""

    def setUp(self):
        self.real_execute = soak.execute
        soak.execute = self.execute
        self.twin_ends = []  # the exit status of each run without the shim, in turn
        self.twin_runs = 0
        self.twin_bounds = []
        self.shim_end = 1
        self.stray = False  # the run under the shim leaves a file in its working folder
        self.out = "rank 0 step 0 loss 1.0\nrank 1 step 0 loss 1.0\n"

    def tearDown(self):
        soak.execute = self.real_execute

    def execute(self, cmd, env, cwd, bound):
        if "CHAKRA_PROFILE" not in env:
            self.twin_runs += 1
            self.twin_bounds.append(bound)
            rc = self.twin_ends.pop(0) if self.twin_ends else 0
        else:
            rc = self.shim_end  # 1: rank 1 aborted, torchrun exits 1
            if self.stray:
                open(os.path.join(cwd, "core"), "w").close()
        if rc == "hung":  # killed at its bound, as execute() does
            return soak.Result(-9, self.out[:23], "", bound, hung=True, stacks="(stacks)")
        err = "terminate called without an active exception\n" if rc else ""
        return soak.Result(rc, self.out, err, 1.0)

    def scenario(self):
        s = soak.draw(90225)
        self.assertEqual((s["kind"], s["fault"], s["dir_fault"], s["windows"]),
                         ("ddp2", "usr1", "none", "fixed"))
        return s

    def test_a_job_that_fails_sometimes_without_the_shim_is_not_blamed_on_it(self):
        # The first run without the shim passed; its third rerun aborts as
        # the run under the shim did.
        self.twin_ends = [0, 0, 0, 1]
        s = self.scenario()
        self.assertEqual(soak.Soak().run(s), [])
        self.assertEqual(s.get("verdict"), "also fails without the shim")
        self.assertEqual(self.twin_runs, 4)

    def test_a_job_that_never_fails_without_the_shim_blames_it_after_the_reruns(self):
        s = self.scenario()
        fails = soak.Soak().run(s)
        self.assertTrue(fails and fails[0].startswith("exit status 1, without the shim 0"), fails)
        self.assertIn("ran 10 more times: none ended as this run did", fails[0])
        self.assertEqual(soak.signature(fails), "exit status 1, without the shim 0")
        self.assertNotIn("verdict", s)
        self.assertEqual(self.twin_runs, 1 + soak.TWIN_RERUNS)

    def hung_scenario(self):
        # Seed 11359 as CI drew it: a DataLoader worker outlived the job's
        # os._exit (torch's race, 2 runs in 24 without the shim).
        s = soak.draw(11359)
        self.assertEqual((s["kind"], s["fault"]), ("loader-fork", "os_exit"))
        self.shim_end = "hung"
        return s

    def test_a_hang_the_job_also_has_without_the_shim_is_not_blamed_on_it(self):
        self.twin_ends = [5, 5, "hung"]
        s = self.hung_scenario()
        self.assertEqual(soak.Soak().run(s), [])
        self.assertEqual(s.get("verdict"), "also fails without the shim")
        self.assertIn("hung too in its rerun 2", s["verdict_detail"])
        self.assertEqual(self.twin_runs, 3)
        # Each rerun within the run's own bound, not the first twin's 600 s.
        self.assertEqual(self.twin_bounds[0], 600)
        self.assertEqual(self.twin_bounds[1:], [self.run_bound(s)] * 2)

    def test_a_hang_the_job_never_has_without_the_shim_is_the_shims(self):
        self.twin_ends = [5] * 11
        s = self.hung_scenario()
        fails = soak.Soak().run(s)
        self.assertTrue(fails and fails[0].startswith("hung: no end within"), fails)
        self.assertIn("ran 10 more times: none ended as this run did", fails[0])
        self.assertNotIn("verdict", s)
        self.assertEqual(self.twin_runs, 1 + soak.TWIN_RERUNS)

    def run_bound(self, s):
        return 2 * 1.0 + s["env"]["CHAKRA_EXIT_TIMEOUT"] + 45

    def test_other_findings_are_the_shims_whatever_the_twin_does(self):
        # A stray file beside the exit status: no rerun excuses that.
        self.stray, self.twin_ends = True, [0, 1]
        s = self.scenario()
        fails = soak.Soak().run(s)
        self.assertIn("stray files outside the trace folder", soak.signature(fails))
        self.assertNotIn("verdict", s)
        self.assertEqual(self.twin_runs, 1)


class Leftovers(unittest.TestCase):
    def test_multiprocessing_listeners_are_not_judged_after_os_exit_or_sigkill(self):
        name = os.path.join("pymp-onuh13s2", "listener-qxs46n3r")
        self.assertTrue(soak.mp_leftover({"fault": "os_exit"}, name))
        self.assertTrue(soak.mp_leftover({"fault": "sigkill"}, name))
        self.assertFalse(soak.mp_leftover({"fault": "sigterm"}, name))
        self.assertFalse(soak.mp_leftover({"fault": "os_exit"}, "chakra-trace.json"))
        self.assertFalse(soak.mp_leftover({"fault": "os_exit"}, os.path.join("pymp-onuh13s2", "x")))


class Turns(unittest.TestCase):
    """The short soak's rotating seeds (issue #53): TURNS commits in a row
    run every one, each exactly once."""

    def test_turns_partition_the_seeds(self):
        seeds = list(range(100, 139))
        turns = [soak.seeds_of_turn(seeds, t, 3) for t in range(3)]
        self.assertEqual(sorted(sum(turns, [])), seeds)
        self.assertEqual([len(t) for t in turns], [13, 13, 13])
        self.assertEqual(turns[1][:3], [101, 104, 107])
        self.assertEqual(soak.seeds_of_turn(seeds, None, 3), seeds)

    def test_the_turn_follows_the_commit_count(self):
        import subprocess
        import tempfile
        repo = tempfile.mkdtemp(prefix="soak-turns-")
        self.addCleanup(subprocess.run, ["rm", "-rf", repo])
        env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t",
                   GIT_COMMITTER_EMAIL="t@t")

        def git(*args):
            return subprocess.run(["git", "-C", repo, *args], env=env, check=True, capture_output=True,
                                  text=True).stdout.strip()
        turn, why = soak.turn_of_checkout(repo)
        self.assertIsNone(turn, why)  # not a checkout: every seed
        git("init", "-q")
        seen = []
        for n in range(1, 5):
            git("commit", "-q", "--allow-empty", "-m", str(n))
            turn, why = soak.turn_of_checkout(repo)
            self.assertIn("commit %d" % n, why)
            seen.append(turn)
        self.assertEqual(seen, [n % soak.TURNS for n in range(1, 5)])
        # A shallow clone's count is its depth: the hash decides instead.
        shallow = os.path.join(tempfile.mkdtemp(prefix="soak-shallow-"), "c")
        self.addCleanup(subprocess.run, ["rm", "-rf", os.path.dirname(shallow)])
        subprocess.run(["git", "clone", "-q", "--depth", "1", "file://" + repo, shallow], check=True,
                       capture_output=True)
        turn, why = soak.turn_of_checkout(shallow)
        self.assertEqual(turn, int(git("rev-parse", "HEAD"), 16) % soak.TURNS)
        self.assertIn("shallow", why)


if __name__ == "__main__":
    unittest.main()
