"""`chakrashim convert` as a user runs it (issue #19).

1. Golden: the ET+ in ../shared/fixtures/chakra-link/ (chakra_trace_link's
   output) converts to what chakra_converter wrote for it (chakra.0.et.gz),
   compared node by node after decoding both with our schema (ids, names,
   types, ctrl and data deps, inputs, outputs, every attribute) and byte for
   byte; the host ET and device trace there, linked by `chakrashim link`
   then converted, give the same nodes with durations within 1 us.
2. Our captures: a 2-rank DDP capture over gloo and a capture with the
   libcupti test double are converted from their folders (linked in memory);
   every dep points at a node that is there, there is no cycle, comm nodes
   carry their type and size (gloo on CPU: its c10d collectives; a generated
   NCCL pair: its kernels).
3. Bad input: a plain ET, a device trace, a truncated gzip, invalid JSON, a
   dependency cycle and an unknown schema each give one line naming the
   file and the problem, exit status 1, and no output file.
Plus --help, usage errors, --prefix; a capture linked in memory gives the
.et that `chakrashim link` then convert of its ET+ gives, byte for byte
(generated pairs, the golden pair, the CUPTI double), and an ET the
in-memory join does not model takes the ET+ file path; and at scale (issue
#21), as link does: a summary line, a progress bar on a terminal only, a
line per rank for small captures or with --verbose.
"""
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "support"))
import chakra_test as ct  # noqa: E402
import link_trace_gen  # noqa: E402
import nccl_capture  # noqa: E402
from capture_builder import cut_in_half, write_many  # noqa: E402

GOLDEN = os.path.join(ct.SOURCE_DIR, "..", "shared", "fixtures", "chakra-link")
GOLDEN_WHY = ("no golden data at %s: ../shared/fixtures/chakra-link holds a real device trace, its host ET, "
              "chakra_trace_link's ET+ (linked.0.json.gz) and chakra_converter's output for it (chakra.0.et.gz), "
              "made with mlcommons/chakra 21585d8 (see its README)" % GOLDEN)
DUMP = os.environ.get("CHAKRASHIM_TEST_ET_DUMP", "")
PRELOAD = os.environ.get("CHAKRASHIM_TEST_PRELOAD", "")
FAKE_CUPTI = os.environ.get("CHAKRASHIM_TEST_FAKE_CUPTI", "")
JOBS = os.path.join(HERE, "..", "e2e", "jobs")
THREAD_ROOT = "[pytorch|profiler|execution_trace|thread]"
COMP, COMM_SEND, COMM_RECV, COMM_COLL, METADATA = 4, 5, 6, 7, 1


def convert(*args, timeout=300):
    return ct.run([ct.CLI, "convert", *args], env=ct.clean_env(), timeout=timeout)


def dump(path):
    """(metadata, [node]) of a .et, decoded with our schema."""
    r = subprocess.run([DUMP, path], capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        raise AssertionError("chakrashim_et_dump %s: %s" % (path, r.stderr))
    lines = [json.loads(line) for line in r.stdout.splitlines()]
    return lines[0], lines[1:]


def attrs(node):
    return {a[0]: a[2] for a in node["attr"]}


def graph_problems(nodes, chakra_exact=False):
    """What a simulator would trip on: deps on absent nodes, cycles."""
    by_id = {n["id"]: n for n in nodes}
    problems = []
    for n in nodes:
        for d in n["data_deps"]:
            if d not in by_id:
                problems.append("node %d: data dep %d is not there" % (n["id"], d))
        for d in n["ctrl_deps"]:
            # chakra_converter keeps a thread root's ctrl dep on the process
            # node it drops as dangling (--chakra-exact keeps it too; ASTRA-sim's
            # feeder refuses it); every other parent is there.
            if d not in by_id and not (chakra_exact and n["name"] == THREAD_ROOT):
                problems.append("node %d: ctrl dep %d is not there" % (n["id"], d))
    state = {}
    for start in by_id:
        if start in state:
            continue
        stack = [(start, iter(by_id[start]["data_deps"]))]
        state[start] = 1
        while stack:
            nid, deps = stack[-1]
            nxt = next(deps, None)
            if nxt is None:
                state[nid] = 2
                stack.pop()
            elif nxt in by_id and state.get(nxt) == 1:
                problems.append("cycle through node %d" % nxt)
                return problems
            elif nxt in by_id and nxt not in state:
                state[nxt] = 1
                stack.append((nxt, iter(by_id[nxt]["data_deps"])))
    return problems


def comm_problems(nodes):
    problems = []
    for n in nodes:
        a = attrs(n)
        if n["type"] == COMM_COLL and ("comm_type" not in a or a.get("comm_size", 0) <= 0):
            problems.append("collective %d lacks comm_type or comm_size" % n["id"])
        if n["type"] in (COMM_SEND, COMM_RECV) and a.get("comm_size", 0) <= 0:
            problems.append("send/recv %d lacks comm_size" % n["id"])
    return problems


class ConvertCase(unittest.TestCase):
    def setUp(self):
        self.assertTrue(ct.CLI, "CHAKRASHIM_TEST_CLI is not set")
        self.assertTrue(DUMP, "CHAKRASHIM_TEST_ET_DUMP is not set")
        self.root = ct.temp_dir(self)

    def assert_ok(self, r):
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)

    def assert_graph(self, path):
        _, nodes = dump(path)
        self.assertTrue(nodes, path)
        self.assertEqual(graph_problems(nodes), [])
        self.assertEqual(comm_problems(nodes), [])
        return nodes


class Golden(ConvertCase):
    """Acceptance 1: what chakra_converter writes for Chakra's own ET+."""

    @classmethod
    def setUpClass(cls):
        if not os.path.isdir(GOLDEN):
            raise unittest.SkipTest(GOLDEN_WHY)

    def setUp(self):
        super().setUp()
        self.theirs = os.path.join(GOLDEN, "chakra.0.et.gz")

    def compare(self, ours_path, exact_durations):
        meta_o, ours = dump(ours_path)
        meta_t, theirs = dump(self.theirs)
        self.assertEqual(meta_o, meta_t)
        self.assertEqual(len(ours), len(theirs))
        self.assertEqual(len(ours), 18050, "one node (the process root) is dropped as dangling")
        for o, t in zip(ours, theirs):
            do, dt = o.pop("duration_micros"), t.pop("duration_micros")
            self.assertEqual(o, t)
            if exact_durations:
                self.assertEqual(do, dt, o["id"])
            else:
                self.assertLessEqual(abs(do - dt), 1, o["id"])
        return ours

    def test_chakras_et_plus_converts_node_by_node_and_byte_for_byte(self):
        out = os.path.join(self.root, "chakra.0.et")
        r = convert("--chakra-exact", os.path.join(GOLDEN, "linked.0.json.gz"), "--output", out)
        self.assert_ok(r)
        self.assertIn("18050 nodes (21 collectives, 0 sends, 0 receives)", r.stdout)
        ours = self.compare(out, exact_durations=True)
        with open(out, "rb") as f, gzip.open(self.theirs, "rb") as g:
            self.assertTrue(f.read() == g.read(), "not byte-identical to chakra.0.et")
        colls = [n for n in ours if n["type"] == COMM_COLL]
        self.assertEqual(len(colls), 21)
        self.assertEqual(comm_problems(ours), [])
        self.assertEqual(graph_problems(ours, chakra_exact=True), [])
        self.assertTrue(graph_problems(ours), "the thread roots' ctrl deps on the dropped process root")

    def test_by_default_only_the_dangling_ctrl_deps_go(self):
        # The default output (for ASTRA-sim) of the same ET+, with
        # --no-gaps: the same nodes, less the ctrl deps on the node that is
        # not written; with the gaps, durations add up to more.
        for flags in (["--no-gaps"], []):
            out = os.path.join(self.root, "default.0.et")
            self.assert_ok(convert(*flags, os.path.join(GOLDEN, "linked.0.json.gz"), "--output", out))
            ours = dump(out)[1]
            _, theirs = dump(self.theirs)
            self.assertEqual(graph_problems(ours), [])
            dropped = 0
            for o, t in zip(ours, theirs):
                if o["ctrl_deps"] != t["ctrl_deps"]:
                    self.assertEqual(t["name"], THREAD_ROOT)
                    self.assertEqual(o["ctrl_deps"], [])
                    dropped += 1
                    o["ctrl_deps"] = t["ctrl_deps"]
                do, dt = o.pop("duration_micros"), t.pop("duration_micros")
                if not flags and not attrs(o)["is_cpu_op"]:
                    self.assertEqual(do, dt, "GPU nodes keep the converter's durations")
                elif flags:
                    self.assertEqual(do, dt)
                self.assertEqual(o, t)
            self.assertGreater(dropped, 0)

    def test_linked_by_us_then_converted_gives_the_same_nodes(self):
        et_plus = os.path.join(self.root, "linked.0.json")
        r = ct.run([ct.CLI, "link", "--host", os.path.join(GOLDEN, "host.0.json.gz"),
                    "--device", os.path.join(GOLDEN, "device.0.json.gz"), "--output", et_plus],
                   env=ct.clean_env(), timeout=300)
        self.assert_ok(r)
        self.assert_ok(convert("--chakra-exact", et_plus))  # default output: linked.0.et
        # Chakra's linker sums float microseconds, ours integer nanoseconds:
        # a few exclusive durations differ by a few ns, so int() by 1 us.
        self.compare(os.path.join(self.root, "linked.0.et"), exact_durations=False)


@unittest.skipUnless(ct.WITH_TORCH and PRELOAD, "needs torch and the preload (CHAKRA_WITH_TORCH)")
class OurCaptures(ConvertCase):
    """Acceptance 2: real captures, linked then converted from their folder."""

    def test_two_rank_ddp_capture_over_gloo(self):
        ct.capture_ddp_gloo(self, self.root)
        r = convert(self.root)
        self.assert_ok(r)
        for rank in (0, 1):
            self.assertIn("rank %d: linked in memory (" % rank, r.stdout)
            nodes = self.assert_graph(os.path.join(self.root, "0_et", "rank.%d.et" % rank))
            # gloo on CPU: no GPU nodes; its c10d collectives are the comm
            # nodes (tests/tools/test_simulate.py checks their sizes).
            colls = [n for n in nodes if n["type"] in (COMM_COLL, COMM_SEND, COMM_RECV)]
            self.assertTrue(colls)
            self.assertTrue(all(n["name"].startswith("c10d::") and not attrs(n)["is_cpu_op"] for n in colls))
            self.assertTrue(all(attrs(n)["is_cpu_op"] for n in nodes if n not in colls))
            self.assertTrue(any(n["name"].startswith("aten::") for n in nodes))
            steps = [n for n in nodes if "Optimizer.step" in n["name"]]
            self.assertTrue(steps)
            self.assertGreater(sum(1 for n in nodes if n["data_deps"]), len(nodes) * 0.9)
            pg = [n for n in nodes if n["name"] == "## process_group:init ##"]
            self.assertEqual([n["type"] for n in pg], [COMP], "COMP: ASTRA-sim asserts on METADATA nodes")
        # As chakra_converter: no comm node, Optimizer.step's duration zeroed
        # (it covers the step, the converter says).
        exact = os.path.join(self.root, "exact", "rank")
        self.assert_ok(convert("--chakra-exact", "--prefix", exact, self.root))
        for rank in (0, 1):
            _, nodes = dump("%s.%d.et" % (exact, rank))
            self.assertFalse([n for n in nodes if n["type"] in (COMM_COLL, COMM_SEND, COMM_RECV)])
            self.assertTrue(all(attrs(n)["is_cpu_op"] for n in nodes))
            self.assertEqual({n["duration_micros"] for n in nodes if "Optimizer.step" in n["name"]}, {0})
            self.assertTrue(any(n["type"] == METADATA for n in nodes), "## process_group:init ##")
        # Converted again: the ET+ are up to date and not linked again.
        again = convert(self.root)
        self.assert_ok(again)
        self.assertNotIn("linked ->", again.stdout)

    def test_a_data_by_tensor_mesh_keeps_each_collective_in_its_group(self):
        """Issue #50, item 3: 4 ranks, tensor parallel inside pairs and data
        parallel across them (tests/e2e/jobs/tp_gloo.py --dp). torch's ET
        writes a c10d op's group as "<Object>"; chakrashim's recorder names
        it (pg_name, pg_desc, pg_size), so each comm node carries its group,
        and the communicator-group file holds every rank's groups (each
        rank's ET lists only its own): before, all were written for the
        default group, with a warning."""
        ct.capture_gloo_job(self, self.root, "tp_gloo.py", ["6", "--dp"], world_size=4)
        r = convert(self.root)
        self.assert_ok(r)
        self.assertNotIn("written for the default group", r.stdout + r.stderr)
        for rank in range(4):
            self.assertIn("rank %d: linked in memory (" % rank, r.stdout)
        with open(os.path.join(self.root, "0_et", "rank.comm_groups.json")) as f:
            groups = json.load(f)
        pairs = sorted(sorted(ranks) for ranks in groups.values())
        self.assertEqual(pairs, [[0, 1], [0, 2], [1, 3], [2, 3]], groups)
        for rank in range(4):
            _, nodes = dump(os.path.join(self.root, "0_et", "rank.%d.et" % rank))
            named = {attrs(n).get("pg_name") for n in nodes if n["type"] == COMM_COLL}
            self.assertTrue(named, "rank %d has collectives" % rank)
            for pg in named:
                self.assertIn(pg, groups, "rank %d: a collective of group %r" % (rank, pg))
                self.assertIn(rank, groups[pg])
            self.assertEqual(len(named), 2, "rank %d: its tensor and its data group: %s" % (rank, named))

    @unittest.skipUnless(FAKE_CUPTI, "the libcupti test double was not built")
    def test_a_two_stage_pipeline_is_coupled_by_its_sends_and_receives(self):
        """Issue #50: c10d::send and recv_ become COMM_SEND / COMM_RECV nodes
        with global comm_src and comm_dst, a tag and a size; each message a
        rank sends, its peer receives (else ASTRA-sim runs the stages as two
        independent jobs, or waits for ever)."""
        for schedule in ("gpipe", "1f1b"):
            with self.subTest(schedule=schedule):
                root = os.path.join(self.root, schedule)
                ct.capture_gloo_job(self, root, "pipeline_gloo.py", ["5", schedule, "4"])
                r = convert(root)
                self.assert_ok(r)
                self.assertNotIn("point-to-point", r.stdout + r.stderr)
                # ASTRA-sim's network, fitted to the captured messages.
                self.assertRegex(r.stdout, r"network fitted to \d+ captured collectives and messages: latency ")
                with open(os.path.join(root, "0_et", "rank.network.yml")) as f:
                    network = f.read()
                self.assertIn("topology: [ Ring ]\nnpus_count: [ 2 ]", network)
                messages = {}
                for rank in (0, 1):
                    nodes = self.assert_graph(os.path.join(root, "0_et", "rank.%d.et" % rank))
                    p2p = [n for n in nodes if n["type"] in (COMM_SEND, COMM_RECV)]
                    # 4 micro-batches: activations one way, gradients the
                    # other, in each of the window's 3 steps (the partial
                    # step at the end, if any, is left out whole).
                    self.assertGreaterEqual(len(p2p), 2 * 4 * 2, r.stdout)
                    self.assertIn("%d sends, %d receives" % (len(p2p) // 2, len(p2p) // 2), r.stdout)
                    for n in p2p:
                        a = attrs(n)
                        send = n["type"] == COMM_SEND
                        self.assertEqual(n["name"], "c10d::send" if send else "c10d::recv_")
                        self.assertFalse(a["is_cpu_op"])
                        self.assertEqual(a["comm_src" if send else "comm_dst"], rank)
                        self.assertEqual(a["comm_dst" if send else "comm_src"], 1 - rank)
                        # Activations and their gradients alike: a micro-batch
                        # of 4 rows of 32 floats.
                        self.assertEqual(a["comm_size"], 4 * 32 * 4)
                        key = (a["comm_src"], a["comm_dst"], a["comm_tag"], a["comm_size"])
                        messages.setdefault(key, [0, 0])[0 if send else 1] += 1
                self.assertTrue(messages)
                for key, (sends, receives) in messages.items():
                    self.assertEqual(sends, receives, "message %s: %d sent, %d received" % (key, sends, receives))

    def test_capture_with_the_libcupti_double(self):
        env = ct.clean_env(LD_PRELOAD=PRELOAD, CHAKRA_PROFILE=1, CHAKRA_TRACE_DIR=self.root,
                           CHAKRA_START_STEP=2, CHAKRA_END_STEP=4, CHAKRA_CUPTI_LIB=FAKE_CUPTI)
        job = ct.run([ct.PYTHON, os.path.join(JOBS, "plain_loop.py"), "12"], env=env, timeout=300)
        self.assertEqual(job.returncode, 0, job.stdout + job.stderr)
        prefix = os.path.join(self.root, "sim", "cupti")
        r = convert(self.root, "--prefix", prefix)
        self.assert_ok(r)
        nodes = self.assert_graph(prefix + ".0.et")
        gpu = [n for n in nodes if not attrs(n)["is_cpu_op"]]
        self.assertGreater(len(gpu), 20)
        by_id = {n["id"]: n for n in nodes}
        for n in gpu:
            self.assertEqual(n["type"], COMP, "the double emits no NCCL kernels")
            self.assertEqual(len(n["ctrl_deps"]), 1)
            self.assertTrue(attrs(by_id[n["ctrl_deps"][0]])["is_cpu_op"], "a GPU node under its launching op")
            self.assertTrue(n["data_deps"], "a GPU node waits for the op before it")
            self.assertEqual(attrs(n)["stream"], 7)


class NcclPipeline(ConvertCase):
    """Issue #50: a GPU pipeline's ncclDevKernel_SendRecv kernels get the
    ends and tag ASTRA-sim matches (chakra_converter writes only comm_size
    and pg_name, and ASTRA-sim stops at such a node). A real 2-stage gloo
    capture, rewritten as ProcessGroupNCCL records its sends and receives
    (tests/support/nccl_capture.py): record_param_comms under each op, the
    kernel it launched under that."""

    def capture(self, group):
        ct.capture_gloo_job(self, self.root, "pipeline_gloo.py", ["5", "1f1b", "4"])
        return nccl_capture.make_nccl(self.root, group=group)

    def messages(self, made):
        """Each rank's send and receive nodes, checked; the messages of all."""
        messages = {}
        for rank, (ops, kernels) in made.items():
            nodes = self.assert_graph(os.path.join(self.root, "0_et", "rank.%d.et" % rank))
            p2p = [n for n in nodes if n["type"] in (COMM_SEND, COMM_RECV)]
            self.assertEqual(len(p2p), ops, "rank %d: a message per c10d op (%d kernels)" % (rank, kernels))
            for n in p2p:
                a = attrs(n)
                self.assertTrue(n["name"].startswith("ncclDevKernel_SendRecv"), n["name"])
                self.assertFalse(a["is_cpu_op"])
                self.assertEqual(a["stream"], nccl_capture.NCCL_STREAM)
                send = n["type"] == COMM_SEND
                self.assertEqual(a["comm_src" if send else "comm_dst"], rank)
                self.assertEqual(a["comm_dst" if send else "comm_src"], 1 - rank)
                self.assertEqual(a["comm_size"], 4 * 32 * 4, "a micro-batch of 4 rows of 32 floats")
                self.assertEqual(a["pg_name"], "0")
                key = (a["comm_src"], a["comm_dst"], a["comm_tag"], a["comm_size"])
                messages.setdefault(key, [0, 0])[0 if send else 1] += 1
            hosts = [n for n in nodes if n["name"] in ("c10d::send", "c10d::recv_")]
            self.assertTrue(hosts and all(n["type"] == COMP for n in hosts), "the host ops launch, the kernels send")
        self.assertEqual(len(messages), 2, messages)
        for key, (sends, receives) in messages.items():
            self.assertEqual(sends, receives, "message %s: %d sent, %d received" % (key, sends, receives))
        check = ct.run([ct.CLI, "check", os.path.join(self.root, "0_et")], env=ct.clean_env(), timeout=120)
        self.assertEqual(check.returncode, 0, check.stdout + check.stderr)
        # (A warning that the CPU nodes exceed the window can come of a loaded
        # machine's capture: not a verdict on the messages.)
        self.assertIn(" 0 errors", check.stdout)
        self.assertNotIn("p2p", check.stdout)

    def test_each_send_and_recv_kernel_is_a_message_between_global_ranks(self):
        made = self.capture(1)
        r = convert(self.root)
        self.assert_ok(r)
        self.assertNotIn("point-to-point", r.stdout + r.stderr)
        self.assertNotIn("batch_isend_irecv", r.stdout)
        self.messages(made)

    def test_the_file_path_writes_what_memory_does(self):
        """The ET+ file path (link, then convert JOB_linked) reads each GPU
        node's stream itself (the messages' order on the streams) and gives
        the same bytes as the in-memory join."""
        made = self.capture(2)
        mem, text = (os.path.join(self.root, d, "rank") for d in ("mem", "text"))
        self.assert_ok(convert(self.root, "--prefix", mem))
        self.assert_ok(ct.run([ct.CLI, "link", self.root], env=ct.clean_env(), timeout=300))
        self.assert_ok(convert(os.path.join(self.root, "0_linked"), "--prefix", text))
        for rank in made:
            with open("%s.%d.et" % (mem, rank), "rb") as a, open("%s.%d.et" % (text, rank), "rb") as b:
                self.assertTrue(a.read() == b.read(), "rank %d: the in-memory .et differs from the file path's" % rank)

    def test_a_batch_isend_irecv_groups_one_kernel_is_a_message_per_op(self):
        made = self.capture(2)
        for rank, (ops, kernels) in made.items():
            self.assertEqual(kernels * 2, ops, "one kernel every two ops")
        r = convert(self.root)
        self.assert_ok(r)
        self.assertNotIn("point-to-point", r.stdout + r.stderr)
        for rank, (ops, kernels) in made.items():
            self.assertRegex(r.stdout, r"rank %d: .*, %d of them from %d NCCL kernels that each ran a "
                                       r"batch_isend_irecv group" % (rank, ops, kernels))
        self.messages(made)


class GeneratedPairs(ConvertCase):
    def test_nccl_collectives_are_typed_and_sized(self):
        et, dev = (os.path.join(self.root, n) for n in ("et.json", "device.json"))
        link_trace_gen.generate(et, dev, steps=2, ops_per_step=20, threads=2, nccl_share=0.2, world_size=2)
        linked = os.path.join(self.root, "linked.json.gz")
        self.assert_ok(ct.run([ct.CLI, "link", "--host", et, "--device", dev, "--output", linked],
                              env=ct.clean_env(), timeout=120))
        out = os.path.join(self.root, "gen.0.et")
        self.assert_ok(convert("--input", linked, "--output", out))
        nodes = self.assert_graph(out)
        colls = [n for n in nodes if n["type"] == COMM_COLL]
        self.assertTrue(colls)
        for n in colls:
            a = attrs(n)
            self.assertEqual(a["comm_type"], 0, "ALL_REDUCE from ncclDevKernel_AllReduce")
            self.assertGreater(a["comm_size"], 0)


class BadInput(ConvertCase):
    """Acceptance 4: one line naming the file and the problem, exit 1, no output."""

    def linked_text(self):
        et, dev = (os.path.join(self.root, n) for n in ("et.json", "device.json"))
        link_trace_gen.generate(et, dev, steps=1, ops_per_step=6, threads=2)
        linked = os.path.join(self.root, "good.json")
        self.assert_ok(ct.run([ct.CLI, "link", "--host", et, "--device", dev, "--output", linked],
                              env=ct.clean_env(), timeout=120))
        with open(linked) as f:
            return f.read()

    def write(self, name, data):
        path = os.path.join(self.root, name)
        with open(path, "wb") as f:
            f.write(data if isinstance(data, bytes) else data.encode())
        return path

    def assert_refused(self, path, *phrases):
        out_dir = os.path.join(self.root, "out")
        os.makedirs(out_dir, exist_ok=True)
        out = os.path.join(out_dir, "x.0.et")
        r = convert(path, "--output", out)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        lines = r.stderr.splitlines()
        self.assertEqual(len(lines), 1, r.stderr)
        self.assertIn(path + ": ", lines[0])
        for p in phrases:
            self.assertIn(p, lines[0])
        self.assertEqual(os.listdir(out_dir), [], "no output and no .partial")

    def test_the_good_one_converts(self):
        path = self.write("ok.json", self.linked_text())
        self.assert_ok(convert(path))
        self.assert_graph(os.path.join(self.root, "ok.et"))

    def test_a_plain_et_never_linked(self):
        et, dev = (os.path.join(self.root, n) for n in ("et.json", "device.json"))
        link_trace_gen.generate(et, dev, steps=1, ops_per_step=6, threads=2)
        self.assert_refused(et, "a host ET that was never linked", "chakrashim link")

    def test_a_device_trace(self):
        et, dev = (os.path.join(self.root, n) for n in ("et.json", "device.json"))
        link_trace_gen.generate(et, dev, steps=1, ops_per_step=6, threads=2)
        self.assert_refused(dev, "a device trace (Kineto format")

    def test_a_truncated_gzip(self):
        packed = gzip.compress(self.linked_text().encode())
        self.assert_refused(self.write("cut.json.gz", packed[: len(packed) * 2 // 3]), "truncated")

    def test_invalid_json(self):
        text = self.linked_text()
        at = text.index('"name"', 2000)
        self.assert_refused(self.write("bad.json", text[:at] + "name" + text[at + 6:]), "invalid JSON")

    def test_a_dependency_cycle(self):
        doc = json.loads(self.linked_text())
        by_thread = {}
        for n in doc["nodes"]:
            parent = next((p for p in doc["nodes"] if p["id"] == n["ctrl_deps"]), None)
            if parent is not None and parent["name"] == THREAD_ROOT and parent["id"] != n["id"]:
                by_thread.setdefault(parent["id"], []).append(n)
        first, second = (ops[0] for ops in list(by_thread.values())[:2])
        first["inter_thread_dep"], second["inter_thread_dep"] = second["id"], first["id"]
        self.assert_refused(self.write("cycle.json", json.dumps(doc)), "dependency cycle: ",
                            "node %d" % first["id"], "node %d" % second["id"])

    def test_an_unknown_schema(self):
        text = self.linked_text().replace('"schema":"1.1.1-chakra.0.0.4"', '"schema":"1.0.3"', 1)
        self.assertIn('"schema":"1.0.3"', text)
        self.assert_refused(self.write("old.json", text), "ET schema '1.0.3' is not one chakra_converter reads",
                            "1.0.3-chakra.0.0.4")

    def test_a_missing_file(self):
        r = convert(os.path.join(self.root, "nope.json"))
        self.assertEqual(r.returncode, 1)
        self.assertIn("nope.json: no such file or folder", r.stderr)


class Cli(ConvertCase):
    def test_help_says_what_it_does(self):
        r = convert("--help")
        self.assert_ok(r)
        for phrase in ("chakra_converter PyTorch", "PREFIX.R.et", "--prefix", "sync", "exit status", "--verbose",
                       "progress bar", "one summary"):
            self.assertIn(phrase, r.stdout)
        main = ct.run([ct.CLI, "--help"], env=ct.clean_env())
        self.assertIn("convert DIR|ET+", main.stdout)

    def test_usage_errors_exit_2(self):
        for args in ([], ["--bogus"], ["a", "b"], ["--jobs", "0", "x"], ["--simulate", "x"],
                     ["--input", "a", "b"], ["--output"]):
            r = convert(*args)
            self.assertEqual(r.returncode, 2, args)
            self.assertIn("chakrashim convert --help", r.stderr)
            self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)

    def test_a_capture_folder_with_a_rank_missing_its_device_trace_fails(self):
        for rank in (0, 1):
            d = os.path.join(self.root, "0_chakra")
            os.makedirs(d, exist_ok=True)
            os.makedirs(os.path.join(self.root, "0_kineto"), exist_ok=True)
            link_trace_gen.generate(os.path.join(d, "rank-%d.json" % rank),
                                    os.path.join(self.root, "0_kineto", "rank-%d.json" % rank),
                                    rank=rank, steps=1, ops_per_step=6, world_size=2)
        os.remove(os.path.join(self.root, "0_kineto", "rank-1.json"))
        r = convert(self.root)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertRegex(r.stderr, r"rank 1 .*no device trace")
        self.assertTrue(os.path.exists(os.path.join(self.root, "0_et", "rank.0.et")))

    def test_a_linked_folder_converts_as_it_is(self):
        src = os.path.join(self.root, "0_chakra")
        os.makedirs(src)
        os.makedirs(os.path.join(self.root, "0_kineto"))
        link_trace_gen.generate(os.path.join(src, "rank-0.json"), os.path.join(self.root, "0_kineto", "rank-0.json"),
                                steps=1, ops_per_step=6)
        self.assert_ok(ct.run([ct.CLI, "link", self.root], env=ct.clean_env(), timeout=120))
        r = convert(os.path.join(self.root, "0_linked"), "--jobs", "1")
        self.assert_ok(r)
        self.assertNotIn("linked ->", r.stdout)
        self.assert_graph(os.path.join(self.root, "0_et", "rank.0.et"))


class InMemory(ConvertCase):
    """convert CAPTURE links each rank in memory (tools/convert/linked_join.h):
    what it writes must be, byte for byte, what `chakrashim link` then
    convert of the ET+ file writes. And an ET whose nodes the in-memory join
    does not model takes that file path itself."""

    def pair(self, rank=0, **shape):
        for d in ("0_chakra", "0_kineto"):
            os.makedirs(os.path.join(self.root, d), exist_ok=True)
        et = os.path.join(self.root, "0_chakra", "rank-%d.json" % rank)
        dev = os.path.join(self.root, "0_kineto", "rank-%d.json" % rank)
        link_trace_gen.generate(et, dev, rank=rank, **shape)
        return et, dev

    def assert_same_both_ways(self, ranks, root=None):
        root = root or self.root
        mem = os.path.join(self.root, "mem", "rank")
        r = convert(root, "--prefix", mem)
        self.assert_ok(r)
        for rank in ranks:
            self.assertIn("rank %d: linked in memory (" % rank, r.stdout)
        self.assertFalse(os.path.exists(os.path.join(root, "0_linked")), "no ET+ file in memory")
        self.assert_ok(ct.run([ct.CLI, "link", root], env=ct.clean_env(), timeout=300))
        text = os.path.join(self.root, "text", "rank")
        self.assert_ok(convert(os.path.join(root, "0_linked"), "--prefix", text))
        for rank in ranks:
            with open("%s.%d.et" % (mem, rank), "rb") as a, open("%s.%d.et" % (text, rank), "rb") as b:
                self.assertTrue(a.read() == b.read(), "rank %d: the in-memory .et differs from the file path's" % rank)
            self.assert_graph("%s.%d.et" % (mem, rank))
        return r

    def test_generated_pairs_with_nccl_threads_and_ids_out_of_file_order(self):
        # link_trace_gen writes the thread and process roots last: link's
        # plan then writes nodes in id order, not file order.
        self.pair(0, steps=3, ops_per_step=30, depth=4, threads=3, kernels_per_op=3, nccl_share=0.3,
                  arg_size=3, world_size=2)
        self.pair(1, steps=3, ops_per_step=30, depth=2, threads=1, kernels_per_op=1, nccl_share=0.0,
                  world_size=2)
        self.assert_same_both_ways([0, 1])

    def test_the_golden_pair(self):
        if not os.path.isdir(GOLDEN):
            self.skipTest(GOLDEN_WHY)
        for d, name in (("0_chakra", "host.0.json.gz"), ("0_kineto", "device.0.json.gz")):
            os.makedirs(os.path.join(self.root, d))
            shutil.copy(os.path.join(GOLDEN, name), os.path.join(self.root, d, "rank-0.json.gz"))
        self.assert_same_both_ways([0])

    @unittest.skipUnless(ct.WITH_TORCH and PRELOAD and FAKE_CUPTI, "needs torch, the preload and the libcupti double")
    def test_a_capture_with_the_libcupti_double(self):
        trace = os.path.join(self.root, "trace")
        env = ct.clean_env(LD_PRELOAD=PRELOAD, CHAKRA_PROFILE=1, CHAKRA_TRACE_DIR=trace,
                           CHAKRA_START_STEP=2, CHAKRA_END_STEP=3, CHAKRA_CUPTI_LIB=FAKE_CUPTI)
        job = ct.run([ct.PYTHON, os.path.join(JOBS, "plain_loop.py"), "6"], env=env, timeout=300)
        self.assertEqual(job.returncode, 0, job.stdout + job.stderr)
        self.assert_same_both_ways([0], root=trace)
        # A gzip ET+ beside the plain device trace finds it too: its
        # recording cost is taken out as in memory (the same bytes).
        shutil.rmtree(os.path.join(trace, "0_linked"))
        self.assert_ok(ct.run([ct.CLI, "link", "--gzip", trace], env=ct.clean_env(), timeout=300))
        gz = os.path.join(self.root, "gz", "rank")
        r = convert(os.path.join(trace, "0_linked"), "--prefix", gz)
        self.assert_ok(r)
        self.assertIn("as the capture measured it", r.stdout)
        with open(os.path.join(self.root, "mem", "rank.0.et"), "rb") as a, open(gz + ".0.et", "rb") as b:
            self.assertTrue(a.read() == b.read(), "the gzip ET+'s .et differs from the in-memory one")

    def test_an_et_the_join_does_not_model_takes_the_file_path(self):
        # A node with a "stream" attribute: the join leaves such nodes to the
        # ET+ text (whose GPU children's stream key and the attribute then
        # meet as Chakra's dict would have them).
        et, _ = self.pair(0, steps=1, ops_per_step=8, threads=1)
        with open(et) as f:
            doc = json.load(f)
        for n in doc["nodes"]:
            if n["name"].startswith("aten::"):
                n["attrs"].append({"name": "stream", "type": "int", "value": 3})
                break
        with open(et, "w") as f:
            json.dump(doc, f)
        mem = os.path.join(self.root, "mem", "rank")
        r = convert(self.root, "--prefix", mem)
        self.assert_ok(r)
        self.assertRegex(r.stdout, r"rank 0: linked -> \S+0_linked/rank-0\.json")
        self.assertIn("1 linked through an ET+ file", r.stdout)
        # The ET+ folder (with the capture beside it, which gives the window
        # written into the .et's metadata) converts to the same bytes.
        text = os.path.join(self.root, "text", "rank")
        self.assert_ok(convert(os.path.join(self.root, "0_linked"), "--prefix", text))
        with open(mem + ".0.et", "rb") as a, open(text + ".0.et", "rb") as b:
            self.assertTrue(a.read() == b.read())

    def test_a_node_the_converter_refuses_is_named_as_in_its_et_plus(self):
        # A node without inputs: the in-memory read refuses it, the file path
        # then gives the reader's own line, naming the ET+ and the node.
        et, _ = self.pair(0, steps=1, ops_per_step=6, threads=1)
        with open(et) as f:
            doc = json.load(f)
        op = next(n for n in doc["nodes"] if n["name"].startswith("aten::"))
        del op["inputs"]
        with open(et, "w") as f:
            json.dump(doc, f)
        r = convert(self.root)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertRegex(r.stderr, r"rank 0: error: \S+0_linked/rank-0\.json: node \d+: no 'inputs'")
        self.assertFalse(os.path.exists(os.path.join(self.root, "0_et", "rank.0.et")))


class ManyRanks(ConvertCase):
    """Issue #21: a summary at the end, a progress bar on a terminal only
    (as test_link.py's ManyRanks, on the same generated capture)."""

    NODES_PER_RANK = 22  # what one write_many rank converts to

    def test_512_ranks_print_a_summary_and_per_rank_lines_with_verbose(self):
        write_many(self.root, 512)
        r = convert(self.root)
        self.assert_ok(r)
        # The generated ranks hold no collective: one warning says so (issue #36).
        self.assertRegex(r.stdout, r"^warning: a world of 512 ranks converted without any collective: [^\n]+\n"
                                   r"chakrashim convert: 512 ranks converted, 0 failed; 512 linked in memory; "
                                   r"%d nodes written; [0-9.]+ s; \.et in .*0_et\n$" % (512 * self.NODES_PER_RANK))
        # Piped: no bar; past 10 s (a busy machine) a plain line every 10 s.
        self.assertNotIn("\r", r.stderr)
        for line in r.stderr.splitlines():
            self.assertRegex(line, r"^converting [0-9]+/512 ranks, [0-9.]+ s, [0-9.]+ ranks/s$")
        self.assertEqual(len(os.listdir(os.path.join(self.root, "0_et"))), 512)
        self.assertFalse(os.path.exists(os.path.join(self.root, "0_linked")), "no ET+ files")
        # Again, with --verbose: every rank gets its line.
        v = convert("--verbose", self.root)
        self.assert_ok(v)
        lines = v.stdout.splitlines()
        self.assertEqual(len([l for l in lines if l.startswith("rank ")]), 512, v.stdout[:2000])
        self.assertIn("rank 411: linked in memory (", v.stdout)
        self.assertIn("), %d nodes (" % self.NODES_PER_RANK, v.stdout)
        self.assertRegex(lines[-1], r"^chakrashim convert: 512 ranks converted, 0 failed; 512 linked in memory; "
                                    r"%d nodes written; "
                         % (512 * self.NODES_PER_RANK))
        q = convert("--quiet", self.root)
        self.assert_ok(q)
        self.assertEqual(q.stderr, "")
        self.assertEqual([l.split(":")[0] for l in q.stdout.splitlines()], ["warning"], "warnings only")

    def test_a_few_ranks_still_print_a_line_each(self):
        write_many(self.root, 3)
        r = convert(self.root)
        self.assert_ok(r)
        self.assertEqual(len([l for l in r.stdout.splitlines() if l.startswith("rank ")]), 3, r.stdout)
        self.assertIn("chakrashim convert: 3 ranks converted, 0 failed; 3 linked in memory", r.stdout)

    def test_a_failed_rank_is_named_among_many(self):
        write_many(self.root, 64)
        cut_in_half(os.path.join(self.root, "0_kineto", "rank-40.json"))
        r = convert(self.root)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertRegex(r.stdout.splitlines()[-1], r"^chakrashim convert: 63 ranks converted, 1 failed; "
                                                    r"63 linked in memory; %d nodes written" % (63 * self.NODES_PER_RANK))
        self.assertFalse([l for l in r.stdout.splitlines() if l.startswith("rank ")], r.stdout)
        self.assertRegex(r.stderr, r"(?m)^chakrashim convert: rank 40: error: link: .*rank-40\.json")

    def test_the_progress_bar_shows_on_a_terminal_only(self):
        write_many(self.root, 64)
        text = ct.assert_rank_bar_on_terminal_only(self, [ct.CLI, "convert", self.root], "converting", 64)
        self.assertIn("chakrashim convert: 64 ranks converted", text)


if __name__ == "__main__":
    unittest.main()
