"""CHAKRA_ET_RECORDER parity on a torch.compile'd model (inductor on the
CPU), apart from test_et_recorder.py because compiling takes a minute here.

torch's autograd sequence numbers (the nodes' seq_id) count every autograd
node the process made, compiling included, and a compile that finds its
graphs in inductor's cache makes fewer: both captures compared run with the
same, warm, cache of this test's own (the first run fills it)."""
import os
import unittest

from harness import capture_files, job_env, run_job
from test_et_recorder import ParityCase, et_parity


class CompiledModelParity(ParityCase):
    def test_compiled_model(self):
        cache = os.path.join(self.trace_dir, "..", "inductor-cache")
        dirs = {}
        for i, recorder in enumerate(("torch", "native", "torch")):
            dirs[recorder] = os.path.join(self.trace_dir, f"{recorder}-{i}")
            r = run_job("compiled_model.py", ["6"],
                        job_env(dirs[recorder], CHAKRA_ET_RECORDER=recorder, CHAKRA_START_STEP=3,
                                CHAKRA_END_STEP=4, TORCHINDUCTOR_CACHE_DIR=cache),
                        timeout=600)
            self.assert_ran(r)
        self.assert_parity(dirs["torch"], dirs["native"])
        native = et_parity.load(capture_files(dirs["native"])[0])
        self.assertTrue(any(n["name"].startswith("Torch-Compiled Region") or
                            "CompiledFunction" in n["name"] for n in native["nodes"]),
                        [n["name"] for n in native["nodes"]][:20])
        self.assert_consumers_accept(dirs["native"])


if __name__ == "__main__":
    unittest.main()
