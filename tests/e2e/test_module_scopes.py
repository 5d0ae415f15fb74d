"""CHAKRA_MODULE_SCOPES (issue #37, module names): inside the window, every
torch.nn.Module call is a "nn.Module: <root class>.<path>" scope in both
files, the hooks are in only for the window's steps, and the job's numbers
do not change. Off by default; refused with one line where it cannot work."""
import json
import os
import re
import unittest

from e2e_case import CaptureCase
from harness import JOBS, PYTHON, Capture, capture_files, clean_env, job_env, run, run_job, run_plain

JOB = "module_job.py"
SCOPE = "nn.Module: "
# The module calls of one step of module_job.py (but Net.fails).
PER_STEP = {"Net", "Net.encoder", "Net.encoder.0", "Net.encoder.0.fc", "Net.encoder.0.act",
            "Net.encoder.1", "Net.encoder.1.fc", "Net.encoder.1.act", "Net.head"}


def hooks_per_step(stdout):
    return {int(m[1]): int(m[2]) for m in re.finditer(r"^hooks (\d+) (\d+)$", stdout, re.M)}


def losses(stdout):
    return re.findall(r"^loss \d+ \S+$", stdout, re.M)


class ModuleScopes(CaptureCase):
    def capture(self, *args, **settings):
        env = job_env(self.trace_dir, CHAKRA_START_STEP=2, CHAKRA_END_STEP=3, **settings)
        # With the default marker, the job waits for torch.optim's hooks to
        # be in (chakrashim's own, from its registering thread): the window's
        # first step is then named for sure, whatever the machine's load.
        wait = [] if "CHAKRA_STEP_MARKER" in settings else ["--wait-for-hooks"]
        r = run_job(JOB, [6, *args, *wait], env)
        self.assert_ran(r)
        return r

    def et_scopes(self, cap):
        return [n for n in cap.et["nodes"] if n["name"].startswith(SCOPE)]

    def ancestors(self, cap, node):
        out, parent = [], cap.nodes.get(node["ctrl_deps"])
        while parent is not None and parent["id"] != node["id"]:
            out.append(parent["name"])
            if parent["ctrl_deps"] == parent["id"]:
                break
            node, parent = parent, cap.nodes.get(parent["ctrl_deps"])
        return out

    def test_off_by_default(self):
        r = self.capture()
        self.assertEqual(set(hooks_per_step(r.stdout).values()), {0})
        cap = self.assert_valid_capture([2, 3])
        self.assertEqual(self.et_scopes(cap), [])
        self.assertEqual(cap.named(SCOPE), [])

    def test_every_module_call_is_a_scope_in_both_files_inside_the_window_only(self):
        plain = run_plain(JOB, [6, "--raise-at", 2])
        r = self.capture("--raise-at", 2, CHAKRA_MODULE_SCOPES=1)
        # The hooks are in for the window's two steps only, then gone.
        self.assertEqual(hooks_per_step(r.stdout), {0: 0, 1: 0, 2: 2, 3: 2, 4: 0, 5: 0})
        self.assertEqual(losses(r.stdout), losses(plain.stdout), "the job's numbers changed")
        cap = self.assert_valid_capture([2, 3])
        names = [e["name"] for e in cap.named(SCOPE)]
        self.assertTrue(all(e["cat"] == "user_annotation" for e in cap.named(SCOPE)))
        counts = {n[len(SCOPE):]: names.count(n) for n in set(names)}
        # Step 2 also ran Net.fails (which raised) and its inner Linear.
        self.assertEqual(counts, {**{n: 2 for n in PER_STEP}, "Net.fails": 1, "Net.fails.inner": 1})
        for e in cap.named(SCOPE):
            self.assertIn(cap.step_of(e), (2, 3), e)
        # The ET has the same scopes, nested as the modules are.
        et = self.et_scopes(cap)
        self.assertEqual(sorted(n["name"] for n in et), sorted(names))
        for n in et:
            self.assertIsNotNone(Capture.attr(n, "rf_id"))
        linears = [n for n in cap.et["nodes"] if n["name"] == "aten::linear"]
        self.assertEqual(len(linears), 2 * 3 + 1)
        chains = [[a for a in self.ancestors(cap, n) if a.startswith(SCOPE)] for n in linears]
        self.assertIn(["nn.Module: Net.encoder.0.fc", "nn.Module: Net.encoder.0",
                       "nn.Module: Net.encoder", "nn.Module: Net"], chains)
        # The module that raised was closed where it raised: the head after
        # it is not inside it.
        self.assertEqual(chains.count(["nn.Module: Net.head", "nn.Module: Net"]), 2)
        self.assertEqual(chains.count(["nn.Module: Net.fails.inner", "nn.Module: Net.fails",
                                       "nn.Module: Net"]), 1)

    def test_a_child_forked_in_the_window_runs_the_hooks_as_no_ops(self):
        # Forked with the hooks in: the child inherits them (torch's dicts
        # are its memory too), runs its modules through them with the same
        # numbers, opens no record and touches no file of the parent's.
        plain = run_plain(JOB, [6, "--fork-at", 2])
        r = self.capture("--fork-at", 2, CHAKRA_MODULE_SCOPES=1)
        self.assertIn("child exit 0", r.stdout)
        child = re.search(r"^child 2 (\d+) (\S+)$", r.stdout, re.M)
        self.assertIsNotNone(child, r.stdout)
        self.assertEqual(child[1], "2", "the child forked inside the window holds the hooks")
        self.assertEqual(child[2], re.search(r"^child 2 \d+ (\S+)$", plain.stdout, re.M)[1])
        self.assertEqual(losses(r.stdout), losses(plain.stdout), "the job's numbers changed")
        cap = self.assert_valid_capture([2, 3])
        # Only the parent's module calls: nine a step in the window (the
        # child's 27 would be on its own pid, in the parent's files).
        self.assertEqual(len(cap.named(SCOPE)), 18)
        self.assertEqual({e["pid"] for e in cap.named(SCOPE)}, {cap.named(SCOPE)[0]["pid"]})
        self.assertNotIn("error", r.stderr)

    def test_another_threads_modules_are_named_on_that_thread(self):
        r = self.capture("--thread", CHAKRA_MODULE_SCOPES=1)
        # The other thread may be inside a module as the window ends: its
        # scope ends as any straddling op's, so the post hook stays in for
        # one more step at most (the job waits for two of its calls a step).
        hooks = hooks_per_step(r.stdout)
        self.assertIn(hooks[4], (0, 1), r.stdout)
        self.assertEqual(hooks[5], 0, r.stdout)
        cap = self.assert_valid_capture([2, 3])
        aux = cap.named("nn.Module: Aux")
        self.assertTrue(aux, "the other thread's module calls")
        main_tid = next(e["tid"] for e in cap.named("nn.Module: Net"))
        self.assertTrue(all(e["tid"] != main_tid for e in aux))
        self.assertEqual({e["name"] for e in aux}, {"nn.Module: Aux", "nn.Module: Aux.proj"})

    def test_with_the_device_trace_off_the_et_has_them(self):
        # No spans are kept then: the ET alone records, and names modules.
        self.capture(CHAKRA_MODULE_SCOPES=1, CHAKRA_DEVICE_TRACE=0)
        et_path, dev_path = capture_files(self.trace_dir)
        self.assertFalse(os.path.exists(dev_path))
        with open(et_path) as f:
            names = [n["name"] for n in json.load(f)["nodes"] if n["name"].startswith(SCOPE)]
        self.assertEqual(sorted(set(names)), sorted(SCOPE + n for n in PER_STEP))
        self.assertEqual(len(names), 2 * len(PER_STEP))

    def test_torch_observer_records_them_too(self):
        self.capture(CHAKRA_MODULE_SCOPES=1, CHAKRA_ET_RECORDER="torch")
        cap = self.assert_valid_capture([2, 3])
        self.assertEqual(sum(1 for n in self.et_scopes(cap) if n["name"] == "nn.Module: Net.head"), 2)

    def first_compile_in_the_window(self, *flags, **settings):
        # Issue #48: the encoder is compiled for the first time at step 3,
        # inside the window (2-3): Dynamo inlines the encoder's module calls
        # with our hooks in. The job's numbers are unchanged, nothing of
        # ours is traced (no crash, no graph break, none of torch's warnings
        # about global hooks, even as errors), and the capture holds the
        # module calls that ran eagerly.
        args = ["--compile-at", 3, *flags]
        plain = run([PYTHON, os.path.join(JOBS, JOB), *map(str, [6, *args])],
                    dict(clean_env(), PYTHONWARNINGS="error::UserWarning"))
        self.assertEqual(plain.returncode, 0, plain.stderr)
        r = self.capture(*args, CHAKRA_MODULE_SCOPES=1, PYTHONWARNINGS="error::UserWarning", **settings)
        self.assertEqual(losses(r.stdout), losses(plain.stdout), "the job's numbers changed")
        self.assertNotIn("Traceback", r.stderr)
        self.assertNotIn("UserWarning", r.stderr)
        self.assertEqual(r.stderr.count("torch.compile first ran inside this window with CHAKRA_MODULE_SCOPES"),
                         1, r.stderr)
        self.assertEqual(hooks_per_step(r.stdout), {0: 0, 1: 0, 2: 2, 3: 2, 4: 0, 5: 0})
        cap = self.assert_valid_capture([2, 3])
        names = {e["name"][len(SCOPE):] for e in cap.named(SCOPE) if cap.step_of(e) == 3}
        self.assertIn("Net", names)
        self.assertIn("Net.head", names)
        return r

    def test_a_first_compile_inside_the_window_neither_crashes_nor_warns(self):
        self.first_compile_in_the_window()

    def test_a_first_fullgraph_compile_inside_the_window_neither_crashes_nor_warns(self):
        self.first_compile_in_the_window("--fullgraph")

    def test_an_unhashable_module_is_named_and_the_job_runs_on(self):
        # Issue #48: a module with __eq__ and __hash__ = None (a dataclass's)
        # raised TypeError from our pre hook's lookup into the job.
        plain = run_plain(JOB, [6, "--unhashable"])
        r = self.capture("--unhashable", CHAKRA_MODULE_SCOPES=1)
        self.assertEqual(losses(r.stdout), losses(plain.stdout), "the job's numbers changed")
        self.assertNotIn("Traceback", r.stderr)
        cap = self.assert_valid_capture([2, 3])
        names = [e["name"][len(SCOPE):] for e in cap.named(SCOPE)]
        # Called at the root (named by its class) and inside Net.
        self.assertEqual(names.count("Unhashable"), 4, names)
        self.assertEqual({n for n in names if n != "Unhashable"}, PER_STEP)

    def test_submodules_in_an_ordered_dict_are_named_by_path(self):
        # torch 2.4 keeps a module's children in an OrderedDict: every
        # submodule was named by its class (compat.sh's 2.4.1 row).
        r = self.capture("--ordered-modules", CHAKRA_MODULE_SCOPES=1)
        self.assertNotIn("Traceback", r.stderr)
        cap = self.assert_valid_capture([2, 3])
        self.assertEqual({e["name"][len(SCOPE):] for e in cap.named(SCOPE)}, PER_STEP)

    def test_a_window_that_opens_before_the_hooks_are_in_says_where_names_begin(self):
        # late_hooks.py shows it trains only at its first step's end: the
        # window from step 1 opens before torch.optim's hooks (which put
        # module scopes in) are in. Step 1 then has no module names: said in
        # a line, not silent, and the names are there from step 2.
        env = job_env(self.trace_dir, CHAKRA_START_STEP=1, CHAKRA_END_STEP=3, CHAKRA_MODULE_SCOPES=1)
        r = run_job("late_hooks.py", [5], env)
        self.assert_ran(r)
        said = [l for l in r.stderr.splitlines() if "module scopes begin at step" in l]
        self.assertEqual(len(said), 1, r.stderr)
        begin = int(re.search(r"module scopes begin at step (\d+)", said[0])[1])
        self.assertGreaterEqual(begin, 2)
        cap = self.assert_valid_capture([1, 2, 3])
        named = sorted({cap.step_of(e) for e in cap.named(SCOPE)})
        self.assertEqual(named, list(range(begin, 4)), said[0])

    def test_every_exception_the_jobs_handler_raises_reaches_the_job(self):
        # Issue #48: a SIGALRM handler raising every 3 ms while our hooks go
        # in and out (a window every 4 steps) and record. Before, the install
        # ran Python on the job's thread and cleared what was raised there,
        # and torch silenced what was raised in our always-called post hook
        # while another exception unwound a module: raised 8, caught 7.
        r = run_job(JOB, [1500, "--ticks"], job_env(self.trace_dir, CHAKRA_MODULE_SCOPES=1, CHAKRA_START_STEP=2,
                                                     CHAKRA_END_STEP=3, CHAKRA_REPEAT_EVERY=4), timeout=600)
        self.assert_ran(r)
        raised, caught, ours = (int(x) for x in re.search(r"raised (\d+) caught (\d+) ours (\d+)", r.stdout).groups())
        self.assertGreater(ours, 20, "ticks landed in chakrashim's hooks")
        self.assertEqual(raised, caught, r.stdout)
        self.assertNotIn("silenced", r.stderr)
        self.assert_check_passes()

    def test_refused_with_one_line_under_torch_compile(self):
        r = self.capture("--compile", CHAKRA_MODULE_SCOPES=1)
        self.assertEqual(r.stderr.count("CHAKRA_MODULE_SCOPES is ignored"), 1, r.stderr)
        self.assertIn("torch.compile", r.stderr)
        self.assertEqual(set(hooks_per_step(r.stdout).values()), {0})
        cap = self.assert_valid_capture([2, 3])
        self.assertEqual(cap.named(SCOPE), [])

    def test_refused_with_one_line_under_a_custom_step_marker(self):
        r = self.capture(CHAKRA_MODULE_SCOPES=1, CHAKRA_STEP_MARKER="Optimizer.step#SGD")
        self.assertEqual(r.stderr.count("CHAKRA_MODULE_SCOPES is ignored"), 1, r.stderr)
        self.assertIn("CHAKRA_STEP_MARKER", r.stderr)
        cap = self.assert_valid_capture([2, 3])
        self.assertEqual(cap.named(SCOPE), [])


if __name__ == "__main__":
    unittest.main()
