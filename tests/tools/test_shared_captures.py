"""The captures the CTest fixture fixtures.gloo_captures makes once for the
tools' tests (issue #53, tests/support/make_captures.py): a test that asks
for one gets the fixture's copy and starts no job; a capture made by another
preload, or none, and the test makes its own."""
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import chakra_test as ct  # noqa: E402


@unittest.skipUnless(ct.CAPTURES and ct.PRELOAD, "runs under CTest, after fixtures.gloo_captures")
class SharedCaptures(unittest.TestCase):
    def setUp(self):
        self.jobs = []
        real = ct.run_gloo_job
        self.addCleanup(setattr, ct, "run_gloo_job", real)
        ct.run_gloo_job = lambda *a, **k: self.jobs.append(a) or ([0, 0], ["ran", "ran"])

    def test_each_shared_capture_is_copied_and_starts_no_job(self):
        for name, (job, args, start, end, ranks) in ct.SHARED_CAPTURES.items():
            with self.subTest(name=name), tempfile.TemporaryDirectory() as root:
                codes, outputs = ct.gloo_job_capture(root, job, list(args), start, end, ranks)
                self.assertEqual(self.jobs, [], "the fixture's %s was not used" % name)
                self.assertEqual(codes, [0] * ranks)
                self.assertEqual(len(outputs), ranks)
                for rank in range(ranks):
                    for kind in ("chakra", "kineto"):
                        path = os.path.join(root, "0_%s" % kind, "rank-%d.json" % rank)
                        self.assertTrue(os.path.isfile(path), path)
                # The fixture's own copy is left as it was: a test may rewrite its copy.
                self.assertTrue(os.path.isfile(os.path.join(ct.CAPTURES, name, "trace", "0_chakra", "rank-0.json")))

    def test_a_capture_made_by_another_preload_is_not_used(self):
        real = ct.capture_stamp
        self.addCleanup(setattr, ct, "capture_stamp", real)
        ct.capture_stamp = lambda job: real(job) + [["/another/libchakrashim.so", 1, 1]]
        with tempfile.TemporaryDirectory() as root:
            codes, outputs = ct.gloo_job_capture(root, "ddp_gloo.py", ["6"], 2, 4, 2)
            self.assertEqual(outputs, ["ran", "ran"])
            self.assertEqual(len(self.jobs), 1)
            self.assertEqual(os.listdir(root), [])

    def test_a_capture_no_fixture_made_is_run(self):
        with tempfile.TemporaryDirectory() as root:
            ct.gloo_job_capture(root, "ddp_gloo.py", ["7"], 2, 4, 2)  # 7 steps: not shared
            self.assertEqual(len(self.jobs), 1)


if __name__ == "__main__":
    unittest.main()
