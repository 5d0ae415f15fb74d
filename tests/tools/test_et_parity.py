"""tests/support/et_parity.py, the ET recorders' parity judge, on small made-up
ETs: it finds equal what differs only in excluded fields or in consistently
renumbered ids, and names the first real difference."""
import copy
import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "support"))
import et_parity  # noqa: E402

TOOL = os.path.join(os.path.dirname(__file__), "..", "support", "et_parity.py")


def attrs(rf_id, tid=1, schema=""):
    return [{"name": "rf_id", "type": "uint64", "value": rf_id},
            {"name": "fw_parent", "type": "uint64", "value": 0},
            {"name": "seq_id", "type": "int64", "value": -1},
            {"name": "scope", "type": "uint64", "value": 0},
            {"name": "tid", "type": "uint64", "value": tid},
            {"name": "fw_tid", "type": "uint64", "value": 0},
            {"name": "op_schema", "type": "string", "value": schema}]


def node(id_, name, parent, rf_id, inputs=(), types=(), outputs=()):
    return {"id": id_, "name": name, "ctrl_deps": parent,
            "inputs": {"values": list(inputs), "shapes": [[] for _ in inputs],
                       "types": list(types), "strides": [[] for _ in inputs]},
            "outputs": {"values": list(outputs), "shapes": [[] for _ in outputs],
                        "types": ["Tensor(float)" for _ in outputs],
                        "strides": [[] for _ in outputs]},
            "attrs": attrs(rf_id)}


def et(offset=0, pid=1):
    """A thread node, an in-place op on tensor T inside a step, the root.
    `offset` renumbers every id (as another interleaving would)."""
    o = offset
    t = [4 + o, 5 + o, 0, 6, 4, "cpu"]
    return {"schema": "1.1.1-chakra.0.0.4", "pid": pid, "time": "t", "start_ts": pid,
            "finish_ts": pid,
            "nodes": [node(2 + o, "[pytorch|profiler|execution_trace|thread]", 1, 0),
                      node(6 + o, "aten::add_", 3 + o, 11, [t, 1.0], ["Tensor(float)", "Double"], [t]),
                      node(3 + o, "Optimizer.step#SGD.step", 2 + o, 10),
                      node(1, "[pytorch|profiler|execution_trace|process]", 1, 0)]}


class EtParity(unittest.TestCase):
    def test_equal_despite_excluded_fields_and_renumbered_ids(self):
        diff, _ = et_parity.compare(et(), et(offset=100, pid=2))
        self.assertIsNone(diff)

    def test_names_the_first_difference(self):
        b = et()
        b["nodes"][1]["inputs"]["types"][1] = "Int"
        diff, _ = et_parity.compare(et(), b)
        self.assertIn("node #1 (aten::add_) inputs.types", diff)

    def test_an_in_place_output_must_stay_its_input(self):
        b = et()
        b["nodes"][1]["outputs"]["values"][0] = [9, 5, 0, 6, 4, "cpu"]
        diff, _ = et_parity.compare(et(), b)
        self.assertIn("tensor id", diff)

    def test_a_parent_must_map_consistently(self):
        b = et()
        b["nodes"][1]["ctrl_deps"] = 2  # the thread node, not the step
        diff, _ = et_parity.compare(et(), b)
        self.assertIn("ctrl_deps", diff)

    def test_missing_attr_and_missing_node(self):
        b = et()
        del b["nodes"][2]["attrs"][-1]
        self.assertIn("attrs", et_parity.compare(et(), b)[0])
        c = et()
        del c["nodes"][2]
        self.assertIsNotNone(et_parity.compare(et(), c)[0])

    def test_a_c10d_ops_process_group_is_the_one_superset_allowed(self):
        # Issue #50: chakrashim's recorder names a c10d op's group after
        # torch's attrs; torch's own ET cannot. Anywhere else, or in another
        # order, it is a difference.
        group = [{"name": "pg_name", "type": "string", "value": "0"},
                 {"name": "pg_desc", "type": "string", "value": "default_pg"},
                 {"name": "pg_size", "type": "uint64", "value": 2}]
        a, b = et(), et()
        a["nodes"][1]["name"] = b["nodes"][1]["name"] = "c10d::allreduce_"
        b["nodes"][1]["attrs"] += group
        self.assertIsNone(et_parity.compare(a, b)[0])
        b["nodes"][1]["attrs"][-3:] = reversed(group)
        self.assertIn("attrs", et_parity.compare(a, b)[0])
        a, b = et(), et()
        b["nodes"][1]["attrs"] += group
        self.assertIn("attrs", et_parity.compare(a, b)[0], "not on an aten op")

    def test_common_steps_ignores_the_partial_step(self):
        a, b = et(), et()
        b["nodes"].insert(3, node(20, "aten::mul", 2, 12))  # after the last step
        self.assertIsNotNone(et_parity.compare(a, b)[0])
        self.assertIsNone(et_parity.compare(a, b, common_steps=True)[0])

    def test_command_line(self):
        with tempfile.TemporaryDirectory() as d:
            import json
            pa, pb = os.path.join(d, "a.json"), os.path.join(d, "b.json")
            b = copy.deepcopy(et())
            b["nodes"][1]["name"] = "aten::mul_"
            for p, doc in ((pa, et()), (pb, b)):
                with open(p, "w") as f:
                    json.dump(doc, f)
            same = subprocess.run([sys.executable, TOOL, pa, pa], capture_output=True, text=True)
            self.assertEqual(same.returncode, 0, same.stdout + same.stderr)
            diff = subprocess.run([sys.executable, TOOL, pa, pb], capture_output=True, text=True)
            self.assertEqual(diff.returncode, 1)
            self.assertIn("aten::mul_", diff.stdout)
            bad = subprocess.run([sys.executable, TOOL, pa], capture_output=True, text=True)
            self.assertEqual(bad.returncode, 2)


if __name__ == "__main__":
    unittest.main()
