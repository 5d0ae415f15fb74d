"""Step counting: one global step per outermost optimizer step, whatever the
loop's shape (issue: capture, acceptance 2)."""
import unittest

from e2e_case import CaptureCase
from harness import job_env, run_job


class StepCounting(CaptureCase):
    def test_gradient_accumulation_counts_optimizer_steps_not_micro_batches(self):
        r = run_job("grad_accum.py", [5], job_env(self.trace_dir, CHAKRA_START_STEP=1,
                                                  CHAKRA_END_STEP=2))
        self.assert_ran(r)
        cap = self.assert_valid_capture([1, 2])
        micro = {}
        for e in cap.named("micro "):
            micro.setdefault(cap.step_of(e), []).append(e["name"])
        self.assertEqual(sorted(micro[1]), [f"micro 1.{i}" for i in range(4)])
        self.assertEqual(sorted(micro[2]), [f"micro 2.{i}" for i in range(4)])

    def test_two_optimizers_per_iteration_are_two_steps(self):
        r = run_job("two_optimizers.py", [4], job_env(self.trace_dir, CHAKRA_START_STEP=2,
                                                      CHAKRA_END_STEP=3))
        self.assert_ran(r)
        cap = self.assert_valid_capture([2, 3])
        names = sorted(n["name"] for n in cap.outermost_markers())
        self.assertEqual(names, ["Optimizer.step#Adam.step", "Optimizer.step#SGD.step"])

    def test_a_subclass_calling_super_step_counts_once(self):
        r = run_job("nested_step.py", [6], job_env(self.trace_dir, CHAKRA_START_STEP=2,
                                                   CHAKRA_END_STEP=3))
        self.assert_ran(r)
        cap = self.assert_valid_capture([2, 3])
        markers = [n for n in cap.et["nodes"] if n["name"].startswith("Optimizer.step#")]
        self.assertEqual(len(markers), 4, "two nested markers per step")
        self.assertEqual(len(cap.outermost_markers()), 2)
        # Steps 2 and 3 are iterations 2 and 3: nesting did not count twice.
        for e in cap.named("iteration "):
            self.assertEqual(cap.step_of(e), int(e["name"].split()[1]))


if __name__ == "__main__":
    unittest.main()
