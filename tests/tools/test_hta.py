"""Holistic Trace Analysis 0.5.0 on our captures (issue #37, acceptance 1).

Two real captures, made here under the preload: a CPU job (the bundled
example, examples/train_tiny.py) and a job whose GPU half comes from the
libcupti test double (tests/cupti_double: a kernel or memcpy per leaf op, on
stream 7). tests/tools/hta_probe.py runs every HTA analysis that applies to
a capture, in HTA's own interpreter (.deps/hta, made by scripts/setup.sh),
and each answer is checked against the trace file, recomputed here.

HTA rounds times to whole microseconds the way its parser does
(hta/common/trace_parser.py, round_down_time_stamps): a start up (ceil),
an end down (floor), the duration their difference. A sub-microsecond op
gets -1 us. The reference below does the same, so the checks are exact.

What HTA 0.5.0 does on a CPU capture (no GPU events at all) is checked too,
since docs/report.md tells users: the temporal breakdown raises IndexError
and the idle-time breakdown ValueError; the kernel breakdown and launch
stats are empty; the op counts work.
"""
import collections
import glob
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "support"))
import chakra_test as ct  # noqa: E402

HTA_PYTHON = os.environ.get("CHAKRASHIM_TEST_HTA_PYTHON", "")
FAKE_CUPTI = os.environ.get("CHAKRASHIM_TEST_FAKE_CUPTI", "")
PROBE = os.path.join(os.path.dirname(__file__), "hta_probe.py")
JOBS = os.path.join(ct.SOURCE_DIR, "tests", "e2e", "jobs")
GPU_CATS = ("kernel", "gpu_memcpy", "gpu_memset")


class Ev:
    """One complete event with HTA's whole-microsecond times."""

    def __init__(self, e):
        self.name, self.cat, self.args = e["name"], e.get("cat"), e.get("args", {})
        self.ts = math.ceil(e["ts"])
        self.end = math.floor(e["ts"] + e["dur"])
        self.dur = self.end - self.ts


def load_events(trace_dir):
    (path,) = glob.glob(os.path.join(trace_dir, "rank-0.json"))
    with open(path) as f:
        return [Ev(e) for e in json.load(f)["traceEvents"] if e.get("ph") == "X"]


def union_length(spans):
    total, cur = 0, None
    for s, e in sorted(spans):
        if cur and s <= cur[1]:
            cur[1] = max(cur[1], e)
            continue
        if cur:
            total += cur[1] - cur[0]
        cur = [s, e]
    return total + (cur[1] - cur[0] if cur else 0)


def steps_of(events):
    return sorted(int(e.name.split("#")[1]) for e in events
                  if e.cat == "user_annotation" and e.name.startswith("ProfilerStep#"))


def first_step_counts(events):
    """What LabeledTrace.extract_ops() takes by default: the first rank's
    first iteration. An op belongs to the step whose span holds its start;
    a GPU op to its launch's step (by correlation)."""
    step = min((e for e in events if e.name.startswith("ProfilerStep#")), key=lambda e: e.ts)
    host = [e for e in events if e.cat not in GPU_CATS and step.ts <= e.ts < step.end]
    launched = {e.args["correlation"] for e in host if "correlation" in e.args}
    gpu = [e for e in events if e.cat in GPU_CATS and e.args.get("correlation") in launched]
    out = collections.defaultdict(lambda: [0, 0])
    for e in host + gpu:
        out[e.name][0] += 1
        out[e.name][1] += e.dur
    return out


def kineto_input(et_type, et_shape):
    """One ET input as torch.profiler(record_shapes=True) writes it on a
    cpu_op: (Input type, Input Dims)."""
    m = re.fullmatch(r"Tensor\((.*)\)", et_type)
    if m and not m.group(1).startswith("nullptr"):
        return m.group(1), et_shape
    if et_type in ("Int", "Double", "Bool"):
        return "Scalar", []
    m = re.fullmatch(r"GenericList\[(.*)\]", et_type)
    if m:
        items = re.findall(r"Tensor\([^()]*\)|[A-Za-z]+(?:\[[^\]]*\])?", m.group(1))
        if all(i in ("Int", "Double", "Bool") for i in items):
            return "ScalarList", []
        if all(i.startswith("Tensor(") and not i.startswith("Tensor(nullptr") for i in items):
            return "TensorList", et_shape
    return "", []


@unittest.skipUnless(ct.WITH_TORCH and ct.PRELOAD, "needs torch and the preload")
class HtaOnOurCaptures(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not (HTA_PYTHON and os.path.exists(HTA_PYTHON)):
            raise AssertionError(f"no HTA interpreter at {HTA_PYTHON!r}: scripts/setup.sh makes "
                                 ".deps/hta (HolisticTraceAnalysis 0.5.0); run it again")
        tmp = tempfile.TemporaryDirectory(prefix="chakra-hta-")
        cls.addClassCleanup(tmp.cleanup)
        cls.cpu = cls.capture(os.path.join(tmp.name, "cpu"),
                              [os.path.join(ct.SOURCE_DIR, "examples", "train_tiny.py"), "--steps", "4"],
                              CHAKRA_START_STEP=1, CHAKRA_END_STEP=2)
        cls.gpu = None
        if FAKE_CUPTI:
            cls.gpu = cls.capture(os.path.join(tmp.name, "gpu"), [os.path.join(JOBS, "plain_loop.py"), "6"],
                                  CHAKRA_START_STEP=2, CHAKRA_END_STEP=4, CHAKRA_CUPTI_LIB=FAKE_CUPTI)
        cls.answers = {}

    @classmethod
    def capture(cls, root, args, **settings):
        env = ct.clean_env(LD_PRELOAD=ct.PRELOAD, CHAKRA_PROFILE=1, CHAKRA_TRACE_DIR=root,
                           CHAKRA_EXIT_TIMEOUT=300, **settings)
        r = ct.run([ct.PYTHON, *args], env=env, timeout=600)
        assert r.returncode == 0 and "captured steps" in r.stderr, r.stdout + r.stderr
        return os.path.join(root, "0_kineto")

    def probe(self, trace_dir, other=None):
        key = (trace_dir, other)
        if key not in self.answers:
            r = subprocess.run([HTA_PYTHON, PROBE, trace_dir] + ([other] if other else []),
                               capture_output=True, text=True, timeout=600, env=ct.clean_env())
            self.assertEqual(r.returncode, 0, r.stderr[-3000:])
            self.answers[key] = json.loads(r.stdout)
        return self.answers[key]

    def check_ops(self, trace_dir, answer):
        want = first_step_counts(load_events(trace_dir))
        got = {row["name"]: (row["counts"], row["total_duration"]) for row in answer}
        self.assertEqual(set(got), set(want))
        for name, (calls, dur) in want.items():
            self.assertEqual(got[name], (calls, dur), name)

    def test_cpu_capture(self):
        events = load_events(self.cpu)
        a = self.probe(self.cpu)
        self.assertEqual(a["steps"], steps_of(events))
        self.assertEqual(a["steps"], [1, 2])
        # HTA 0.5.0's GPU analyses on a capture without GPU events
        # (docs/report.md says so, and shows what works instead).
        self.assertTrue(a["temporal"]["error"].startswith("IndexError"), a["temporal"])
        self.assertTrue(a["idle"]["error"].startswith("ValueError"), a["idle"])
        self.assertEqual(a["kernel"], {"types": [], "kernels": []})
        self.assertEqual(a["launch"], {"0": []})
        self.assertEqual(a["comm_comp"], [{"rank": 0, "comp_comm_overlap_pctg": None}])
        self.assertGreater(len(a["ops"]), 50)
        self.check_ops(self.cpu, a["ops"])

    def test_input_shapes_on_cpu_ops_are_the_ets(self):
        """Issue #37: each cpu_op carries Kineto's "Input Dims" and "Input
        type", made from the ET node of the same rf_id, and HTA reads them."""
        with open(os.path.join(os.path.dirname(self.cpu), "0_chakra", "rank-0.json")) as f:
            nodes = json.load(f)["nodes"]
        by_rf = {}
        for n in nodes:
            rf = next((a["value"] for a in n["attrs"] if a["name"] == "rf_id"), 0)
            if rf and n["inputs"]["types"]:
                by_rf[rf] = n["inputs"]
        with open(os.path.join(self.cpu, "rank-0.json")) as f:
            ops = [e for e in json.load(f)["traceEvents"] if e.get("cat") == "cpu_op"]
        shaped = 0
        for e in ops:
            inputs = by_rf.get(e["args"].get("Record function id"))
            if inputs is None:
                self.assertNotIn("Input Dims", e["args"], e)
                continue
            want = [kineto_input(t, s) for t, s in zip(inputs["types"], inputs["shapes"])]
            self.assertEqual(e["args"]["Input type"], [t for t, _ in want], e["name"])
            self.assertEqual(e["args"]["Input Dims"], [s for _, s in want], e["name"])
            shaped += 1
        self.assertGreater(shaped, 0.9 * len(ops))
        self.assertTrue(any(t == "TensorList" for e in ops for t in e["args"].get("Input type", [])))
        hta = self.probe(self.cpu)["inputs"]
        self.assertEqual(len(hta), shaped)
        for e in ops:
            if "Input Dims" in e["args"]:
                self.assertEqual(hta[str(e["args"]["External id"])], [e["args"]["Input Dims"], e["args"]["Input type"]])

    @unittest.skipUnless(FAKE_CUPTI, "the libcupti test double was not built")
    def test_libcupti_double_capture(self):
        events = load_events(self.gpu)
        gpu = [e for e in events if e.cat in GPU_CATS]
        self.assertGreater(len(gpu), 20)
        a = self.probe(self.gpu)
        self.assertEqual(a["steps"], steps_of(events))
        self.assertEqual(a["steps"], [2, 3, 4])

        # Temporal: from the first GPU op's start to the last one's end;
        # idle = that less the union of GPU ops; compute = union of kernels
        # (the double's are all computation: no NCCL names).
        span = max(e.end for e in gpu) - min(e.ts for e in gpu)
        busy = union_length([(e.ts, e.end) for e in gpu])
        compute = union_length([(e.ts, e.end) for e in gpu if e.cat == "kernel"])
        (t,) = a["temporal"]
        self.assertEqual((t["kernel_time(us)"], t["idle_time(us)"], t["compute_time(us)"],
                          t["non_compute_time(us)"]), (span, span - busy, compute, busy - compute))

        # Idle breakdown, per stream: the gaps between consecutive GPU ops
        # (by start; an overlap is a negative gap), over all its categories.
        by_stream = collections.defaultdict(list)
        for e in gpu:
            by_stream[e.args["stream"]].append(e)
        idle = collections.Counter()
        for row in a["idle"]:
            idle[row["stream"]] += row["idle_time"]
        want = {}
        for stream, ops in by_stream.items():
            ops.sort(key=lambda e: e.ts)
            want[stream] = sum(b.ts - x.end for x, b in zip(ops, ops[1:]))
        self.assertEqual(dict(idle), want)

        # Kernel breakdown: each kernel name's total and extremes, and the
        # kinds' shares over the union of GPU time.
        for row in a["kernel"]["kernels"]:
            durs = [e.dur for e in gpu if e.name == row["name"]]
            self.assertEqual((row["sum (us)"], row["max (us)"], row["min (us)"]),
                             (sum(durs), max(durs), min(durs)), row["name"])
        self.assertIn("fake_gemm(float const*, float const*, float*, int)",
                      {r["name"] for r in a["kernel"]["kernels"]})
        self.assertEqual(sum(r["sum"] for r in a["kernel"]["types"]), busy)

        # Launch stats: each GPU op (kernels and copies) with its launch, by
        # correlation.
        launches = {e.args["correlation"]: e for e in events if e.cat in ("cuda_runtime", "cuda_driver")}
        rows = a["launch"]["0"]
        kernels = {e.args["correlation"]: e for e in gpu}
        self.assertEqual(sorted(r["correlation"] for r in rows), sorted(kernels))
        for row in rows:
            k, launch = kernels[row["correlation"]], launches[row["correlation"]]
            self.assertEqual((row["cpu_duration"], row["gpu_duration"], row["launch_delay"]),
                             (launch.dur, k.dur, k.ts - launch.end), row)
        # No communication kernels: HTA has no overlap to give.
        self.assertEqual(a["comm_comp"], [{"rank": 0, "comp_comm_overlap_pctg": None}])
        self.check_ops(self.gpu, a["ops"])

    @unittest.skipUnless(FAKE_CUPTI, "the libcupti test double was not built")
    def test_trace_diff_between_the_two_captures(self):
        a = self.probe(self.gpu, self.cpu)
        control, test = first_step_counts(load_events(self.gpu)), first_step_counts(load_events(self.cpu))
        got = {row["name"]: row for row in a["diff"]}
        self.assertEqual(set(got), set(control) | set(test))
        for name, row in got.items():
            c, t = control.get(name, [0, 0]), test.get(name, [0, 0])
            self.assertEqual((row["a_counts"], row["b_counts"], row["diff_counts"]), (c[0], t[0], t[0] - c[0]), name)
            self.assertEqual(row["counts_change_categories"], "+" if t[0] > c[0] else "-" if t[0] < c[0] else "=")


if __name__ == "__main__":
    unittest.main()
