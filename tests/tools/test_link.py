"""`chakrashim link` as a user runs it.

The golden test links the real pair (docs/trace-format.md, "Golden pair") and
compares with Chakra's own output (linked.0.json.gz) by rf_id, as that
folder's README says: the same GPU child nodes with the same parents and
timestamps, the same set of timed host nodes, the same exclusive durations.
Chakra adds floats where we add integer nanoseconds: a handful of exclusive
durations of ops with many children differ by a few ns. The test proves each
such difference is Chakra's float rounding (its value is exactly what the
float formula gives, ours exactly what the exact one gives).

Then: host-only captures, gzip in and out, chakra_trace_link's flag names,
a 2-rank capture folder in parallel, generated pairs (which must pass
`chakrashim check` and read the way chakra_converter reads), --help, and
usage errors (exit 2).
"""
import gzip
import json
import os
import shutil
import sys
import unittest
from decimal import Decimal

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "support"))
import chakra_test as ct  # noqa: E402
import link_trace_gen  # noqa: E402
from capture_builder import RankCapture, write_capture, write_many  # noqa: E402

GOLDEN = ct.GOLDEN_DIR
SEVEN_ATTRS = {"rf_id", "fw_parent", "seq_id", "scope", "tid", "fw_tid", "op_schema"}


def link(*args):
    return ct.run([ct.CLI, "link", *args], env=ct.clean_env(), timeout=300)


def load(path):
    with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
        return json.load(f)


def rf_of(node):
    for a in node.get("attrs", []):
        if a["name"] == "rf_id":
            return a["value"]
    return None


def gpu_children(doc):
    """Counter-like dict of GPU child nodes keyed by what must agree."""
    by_id = {n["id"]: n for n in doc["nodes"]}
    out = {}
    for n in doc["nodes"]:
        if "cat" in n:
            key = (n["name"], round(Decimal(str(n["ts"])) * 1000), rf_of(by_id[n["ctrl_deps"]]), n["cat"],
                   n.get("stream"), n.get("pg_name"))
            out[key] = out.get(key, 0) + 1
    return out


def timed_host_nodes(doc):
    return {rf_of(n): n for n in doc["nodes"] if "inclusive_dur" in n and "cat" not in n}


def exclusive_by_formula(device_path, exact):
    """Chakra's exclusive-duration formula over the device trace, in floats
    as Chakra runs it, or in exact decimals: {Record function id: value}."""
    with open(device_path) as f:
        events = json.load(f, parse_float=Decimal if exact else float)["traceEvents"]
    ops = [e for e in events if e.get("cat") in ("cpu_op", "user_annotation")
           and "ProfilerStep" not in e.get("name", "")]
    ops.sort(key=lambda e: e.get("ts", 0))
    threads = {}
    for e in ops:
        threads.setdefault(e.get("tid", 0), []).append(e)
    out = {}
    for same_thread in threads.values():
        order = sorted(same_thread, key=lambda e: (e.get("ts", 0), e.get("dur", 0)))
        for i, e in enumerate(order):
            start, dur = e.get("ts", 0), e.get("dur", 0)
            end = start + dur
            merged = []
            for c in order[i + 1:]:
                c_start = c.get("ts", 0)
                c_end = c_start + c.get("dur", 0)
                if c_start >= start and c_end <= end:
                    if merged and c_start <= merged[-1][1]:
                        merged[-1] = (merged[-1][0], max(merged[-1][1], c_end))
                    else:
                        merged.append((c_start, c_end))
                if end < c_start:
                    break
            value = dur - sum(t - s for s, t in merged)
            rf = e.get("args", {}).get("Record function id")
            if rf is not None:
                out[rf] = value
    return out


def converter_problems(doc):
    """What chakra_converter (PyTorchConverter.parse_json_trace and
    PyTorchNode) would trip on, read its way: the top-level metadata, every
    node's fields and attrs, the thread nodes it starts from, cat on GPU
    nodes and a CPU parent for each."""
    problems = []
    for k in ("schema", "pid", "time", "start_ts", "finish_ts", "nodes"):
        if k not in doc:
            problems.append("no top-level " + k)
    by_id = {}
    for n in doc.get("nodes", []):
        for k in ("id", "name", "ctrl_deps", "inputs", "outputs"):
            if k not in n:
                problems.append("node %s has no %s" % (n.get("id"), k))
        for side in ("inputs", "outputs"):
            for k in ("values", "shapes", "types"):
                if k not in n.get(side, {}):
                    problems.append("node %s has no %s.%s" % (n.get("id"), side, k))
        if not SEVEN_ATTRS <= {a["name"] for a in n.get("attrs", [])}:
            problems.append("node %s lacks attrs" % n.get("id"))
        if n["id"] in by_id:
            problems.append("id %s twice" % n["id"])
        by_id[n["id"]] = n
        int(n.get("exclusive_dur", 0))  # the converter's duration_micros
    if not any(n["name"] == "[pytorch|profiler|execution_trace|thread]" for n in by_id.values()):
        problems.append("no thread node to start from")
    for n in by_id.values():
        if "cat" not in n:
            continue
        parent = by_id.get(n["ctrl_deps"])
        if parent is None or "cat" in parent:
            problems.append("GPU node %s has no CPU parent" % n["id"])
        if "ncclDevKernel" in n["name"] and "pg_name" not in n:
            problems.append("NCCL node %s has no pg_name" % n["id"])
    return problems


class LinkCase(unittest.TestCase):
    def setUp(self):
        self.assertTrue(ct.CLI, "CHAKRASHIM_TEST_CLI is not set")
        self.root = ct.temp_dir(self)

    def assert_linked(self, result):
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)


class Golden(LinkCase):
    """Acceptance 1: the same linkage as chakra_trace_link on a real trace."""

    @classmethod
    def setUpClass(cls):
        if not os.path.isdir(GOLDEN):
            raise unittest.SkipTest(ct.golden_missing(GOLDEN))

    def setUp(self):
        super().setUp()
        for name in ("host", "device", "linked"):
            with gzip.open(os.path.join(GOLDEN, name + ".0.json.gz"), "rb") as src, \
                    open(os.path.join(self.root, name + ".0.json"), "wb") as dst:
                shutil.copyfileobj(src, dst)
        self.device = os.path.join(self.root, "device.0.json")
        self.out = os.path.join(self.root, "ours.0.json")
        r = link("--rank", "0", "--chakra-host-trace", os.path.join(self.root, "host.0.json"),
                 "--chakra-device-trace", self.device, "--output-file", self.out)
        self.assert_linked(r)
        self.assertIn("3660/3660 GPU ops linked", r.stdout)
        self.ours = load(self.out)
        self.chakra = load(os.path.join(self.root, "linked.0.json"))

    def test_matches_chakra_by_rf_id(self):
        # GPU child nodes: name, ts to the ns, parent's rf_id, cat, stream, pg_name.
        ours, theirs = gpu_children(self.ours), gpu_children(self.chakra)
        self.assertEqual(sum(theirs.values()), 3660)
        self.assertEqual(ours, theirs)
        # Timed host nodes, their ts and inclusive durations to 1 ns.
        ours_t, theirs_t = timed_host_nodes(self.ours), timed_host_nodes(self.chakra)
        self.assertEqual(set(ours_t), set(theirs_t))
        self.assertEqual(len(ours_t), 14385)
        for rf, n in theirs_t.items():
            for field in ("ts", "inclusive_dur"):
                self.assertLessEqual(abs(Decimal(str(ours_t[rf][field])) - Decimal(str(n[field]))), Decimal("0.001"),
                                     (rf, field))
        # Exclusive durations to 1 ns, except where Chakra's float sums drift.
        exact = exclusive_by_formula(self.device, exact=True)
        floats = exclusive_by_formula(self.device, exact=False)
        drifted = 0
        for rf, n in theirs_t.items():
            ours_v, theirs_v = Decimal(str(ours_t[rf]["exclusive_dur"])), Decimal(str(n["exclusive_dur"]))
            self.assertEqual(ours_v, exact[rf], rf)
            if abs(ours_v - theirs_v) > Decimal("0.001"):
                drifted += 1
                self.assertEqual(n["exclusive_dur"], floats[rf], "rf_id %s: not float rounding" % rf)
        self.assertLess(drifted, len(theirs_t) // 100)

    def test_same_ids_parents_and_inter_thread_deps_as_chakra(self):
        self.assertEqual([(n["id"], n.get("ctrl_deps"), n["name"]) for n in self.ours["nodes"]],
                         [(n["id"], n.get("ctrl_deps"), n["name"]) for n in self.chakra["nodes"]])
        self.assertEqual([n.get("inter_thread_dep") for n in self.ours["nodes"]],
                         [n.get("inter_thread_dep") for n in self.chakra["nodes"]])
        self.assertEqual({k for k in self.chakra if k != "nodes"}, {k for k in self.ours if k != "nodes"})

    def test_output_reads_the_way_chakra_converter_reads(self):
        self.assertEqual(converter_problems(self.ours), [])


class HostOnly(LinkCase):
    def test_a_host_only_capture_links_with_timed_nodes_and_no_gpu_children(self):
        write_capture(self.root, [RankCapture(0, 1, gpu=False)])
        r = link(self.root)
        self.assert_linked(r)
        self.assertIn("host-only", r.stdout)
        doc = load(os.path.join(self.root, "0_linked", "rank-0.json"))
        self.assertFalse([n for n in doc["nodes"] if "cat" in n])
        timed = timed_host_nodes(doc)
        self.assertEqual({n["name"] for n in timed.values()},
                         {"aten::linear", "aten::addmm", "aten::copy_", "Optimizer.step#SGD.step", "aten::add_"})
        self.assertEqual([n["id"] for n in doc["nodes"]], list(range(len(doc["nodes"]))))
        self.assertEqual(converter_problems(doc), [])


class Options(LinkCase):
    def test_gzip_output_by_name_and_by_flag(self):
        write_capture(self.root, [RankCapture(0, 1, gpu=True)])
        host = os.path.join(self.root, "0_chakra", "rank-0.json")
        device = os.path.join(self.root, "0_kineto", "rank-0.json")
        out = os.path.join(self.root, "out", "linked.json.gz")
        self.assert_linked(link("--host", host, "--device", device, "--output", out))
        self.assertEqual(len([n for n in load(out)["nodes"] if "cat" in n]), 4)
        self.assert_linked(link("--gzip", self.root))
        self.assertTrue(load(os.path.join(self.root, "0_linked", "rank-0.json.gz"))["nodes"])

    def test_gzip_inputs_link_like_plain_ones(self):
        write_capture(self.root, [RankCapture(0, 1, gpu=True)])
        plain_out = os.path.join(self.root, "plain.json")
        host = os.path.join(self.root, "0_chakra", "rank-0.json")
        device = os.path.join(self.root, "0_kineto", "rank-0.json")
        self.assert_linked(link("--host", host, "--device", device, "--output", plain_out))
        for path in (host, device):
            with open(path, "rb") as src, gzip.open(path + ".gz", "wb") as dst:
                shutil.copyfileobj(src, dst)
        gz_out = os.path.join(self.root, "gz.json")
        self.assert_linked(link("--host", host + ".gz", "--device", device + ".gz", "--output", gz_out))
        self.assertEqual(load(plain_out), load(gz_out))

    def test_a_capture_folder_links_every_rank_in_parallel(self):
        write_capture(self.root, [RankCapture(0, 2, gpu=True), RankCapture(1, 2, gpu=True)])
        r = link("--jobs", "2", self.root)
        self.assert_linked(r)
        for rank in (0, 1):
            self.assertIn("rank %d: " % rank, r.stdout)
            doc = load(os.path.join(self.root, "0_linked", "rank-%d.json" % rank))
            self.assertEqual(len([n for n in doc["nodes"] if "cat" in n]), 4)
        out = os.path.join(self.root, "elsewhere")
        self.assert_linked(link("--output-dir", out, os.path.join(self.root, "0_kineto")))
        self.assertEqual(sorted(os.listdir(out)), ["rank-0.json", "rank-1.json"])

    def test_a_rank_without_its_device_trace_fails_the_run(self):
        write_capture(self.root, [RankCapture(0, 2), RankCapture(1, 2)])
        os.remove(os.path.join(self.root, "0_kineto", "rank-1.json"))
        r = link(self.root)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("rank 1 (run 0): no device trace", r.stderr)
        self.assertTrue(os.path.exists(os.path.join(self.root, "0_linked", "rank-0.json")))

    def test_unreadable_input_is_an_error_with_the_path(self):
        r = link("--host", os.path.join(self.root, "nope.json"), "--device", os.path.join(self.root, "x.json"),
                 "--output", os.path.join(self.root, "o.json"))
        self.assertEqual(r.returncode, 1)
        self.assertIn("nope.json", r.stdout)
        self.assertFalse(os.path.exists(os.path.join(self.root, "o.json")))

    def test_help_says_what_it_does_and_that_sync_dep_is_not_done(self):
        r = link("--help")
        self.assertEqual(r.returncode, 0)
        for text in ("--chakra-host-trace", "--output-file", "sync_dep", "Host-only", "Memsets"):
            self.assertIn(text, r.stdout)

    def test_usage_errors_exit_2(self):
        for args in ([], ["--bogus"], ["--host", "a.json"], ["--host", "a", "--device", "b", "--output", "c", "DIR"],
                     ["--jobs", "0", "DIR"], ["--rank", "x", "DIR"], ["--output"], ["A", "B"]):
            r = link(*args)
            self.assertEqual(r.returncode, 2, args)
            self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)
            self.assertIn("(see 'chakrashim link --help')", r.stderr)
        self.assertIn("(did you mean --output?)", link("--outptu", "x").stderr)


class WrongInputs(LinkCase):
    """Issue #23, wrong answers 3 and 4: inputs that are not one rank's pair."""

    def setUp(self):
        super().setUp()
        write_capture(self.root, [RankCapture(0, 2, gpu=True), RankCapture(1, 2, gpu=True)])
        self.et = lambda r: os.path.join(self.root, "0_chakra", "rank-%d.json" % r)
        self.dev = lambda r: os.path.join(self.root, "0_kineto", "rank-%d.json" % r)
        self.out = os.path.join(self.root, "out.json")

    def assert_refused(self, r, text):
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertEqual(len(r.stdout.splitlines()), 1, r.stdout)
        self.assertIn(text, r.stdout)
        self.assertFalse(os.path.exists(self.out))

    def test_swapped_inputs_are_refused(self):
        self.assert_refused(link("--host", self.dev(0), "--device", self.et(0), "--output", self.out),
                            "the inputs are swapped")
        self.assert_refused(link("--host", self.dev(0), "--device", self.dev(0), "--output", self.out),
                            "is a device trace, not a host ET")
        self.assert_refused(link("--host", self.et(0), "--device", self.et(0), "--output", self.out),
                            "is a host ET, not a device trace")

    def test_another_ranks_device_trace_is_refused(self):
        self.assert_refused(link("--host", self.et(0), "--device", self.dev(1), "--output", self.out),
                            "not one rank's pair: the ET is rank 0's by its name, the device trace says rank 1")

    def test_another_processs_device_trace_is_refused(self):
        other = os.path.join(self.root, "other.json")
        with open(self.dev(0)) as f, open(other, "w") as g:
            g.write(f.read().replace('"pid": 4242', '"pid": 5151'))
        self.assert_refused(link("--host", self.et(0), "--device", other, "--output", self.out),
                            "the ET was written by pid 4242, the device trace by pid 5151")

    def test_the_right_pair_still_links(self):
        self.assert_linked(link("--host", self.et(1), "--device", self.dev(1), "--output", self.out))


class ManyRanks(LinkCase):
    """Issue #21: a summary at the end, a progress bar on a terminal only."""

    def test_512_ranks_print_a_summary_and_per_rank_lines_with_verbose(self):
        write_many(self.root, 512)
        r = link(self.root)
        self.assert_linked(r)
        self.assertEqual(r.stdout.splitlines(), [l for l in r.stdout.splitlines() if l.startswith("chakrashim link:")])
        self.assertRegex(r.stdout, r"^chakrashim link: 512 ranks linked, 0 failed; 3072 GPU ops linked; [0-9.]+ s; "
                                   r"ET\+ in .*0_linked\n$")
        # Piped: no bar and no carriage return; a run past 10 s (a sanitizer
        # build on a busy machine) prints a plain progress line every 10 s.
        self.assertNotIn("\r", r.stderr)
        for line in r.stderr.splitlines():
            self.assertRegex(line, r"^linking [0-9]+/512 ranks, [0-9.]+ s, [0-9.]+ ranks/s$")
        v = link("--verbose", self.root)
        self.assertEqual(len([l for l in v.stdout.splitlines() if l.startswith("rank ")]), 512)

    def test_a_few_ranks_still_print_a_line_each(self):
        write_many(self.root, 3)
        r = link(self.root)
        self.assertEqual(len([l for l in r.stdout.splitlines() if l.startswith("rank ")]), 3, r.stdout)
        self.assertIn("chakrashim link: 3 ranks linked", r.stdout)

    def test_the_progress_bar_shows_on_a_terminal_only(self):
        write_many(self.root, 64)
        text = ct.assert_rank_bar_on_terminal_only(self, [ct.CLI, "link", self.root], "linking", 64)
        self.assertIn("chakrashim link: 64 ranks linked", text)


class Generated(LinkCase):
    def test_generated_pairs_pass_check_link_and_read_as_the_converter_reads(self):
        shapes = [dict(steps=2, ops_per_step=6, depth=1, threads=1, kernels_per_op=1, nccl_share=0, arg_size=0),
                  dict(steps=3, ops_per_step=12, depth=4, threads=3, kernels_per_op=3, nccl_share=0.25, arg_size=3)]
        for i, shape in enumerate(shapes):
            root = os.path.join(self.root, "g%d" % i)
            os.makedirs(os.path.join(root, "0_chakra"))
            os.makedirs(os.path.join(root, "0_kineto"))
            link_trace_gen.generate(os.path.join(root, "0_chakra", "rank-0.json"),
                                    os.path.join(root, "0_kineto", "rank-0.json"), **shape)
            check = ct.run([ct.CLI, "check", "--strict", root], env=ct.clean_env())
            self.assertEqual(check.returncode, 0, check.stdout)
            self.assert_linked(link(root))
            doc = load(os.path.join(root, "0_linked", "rank-0.json"))
            self.assertEqual(converter_problems(doc), [])
            gpu = [n for n in doc["nodes"] if "cat" in n]
            launched = shape["steps"] * (shape["ops_per_step"] + 1) * shape["kernels_per_op"]
            self.assertEqual(len(gpu), launched, shape)
            if shape["nccl_share"]:
                self.assertTrue(all(n["pg_name"] == "0" for n in gpu if "ncclDevKernel" in n["name"]))


if __name__ == "__main__":
    unittest.main()
