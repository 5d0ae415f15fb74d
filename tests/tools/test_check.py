"""`chakrashim check` on fixtures: good captures pass, and each one-thing
edit fails (errors) or warns (warnings, failing only under --strict) with a
line that names the rank and the rule (docs/trace-format.md's check table).

Good captures: small ones in chakrashim's format (tests/support/
capture_builder.py), the golden real device trace with its ET
(docs/trace-format.md, "Golden pair"), and a real torch.profiler +
ExecutionTraceObserver CPU capture made here.
"""
import gzip
import json
import os
import re
import shutil
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "support"))
import chakra_test as ct  # noqa: E402
from capture_builder import RankCapture, cut_in_half, write_capture, write_many  # noqa: E402

GOLDEN = ct.GOLDEN_DIR


def struct_flock(kind):
    """A whole-file struct flock for fcntl (x86_64 and aarch64 Linux)."""
    import struct
    return struct.pack("hhqqi4x", kind, 0, 0, 0, 0)


def check(*args):
    return ct.run([ct.CLI, "check", *args], env=ct.clean_env())


class CheckCase(unittest.TestCase):
    def setUp(self):
        self.assertTrue(ct.CLI, "CHAKRASHIM_TEST_CLI is not set")
        self.root = ct.temp_dir(self)

    def lines(self, result, severity, rule, rank=None):
        who = r"rank %d" % rank if rank is not None else r"(rank \d+|capture)"
        pattern = re.compile(r"^%s(?: \([^)]*\))?: %s \[%s\] .+: .+$" % (who, severity, re.escape(rule)))
        return [l for l in result.stdout.splitlines() if pattern.match(l)]

    def assert_finding(self, args, severity, returncode, rule, rank, text):
        """check's exit code, and a `severity` line of `rule` for `rank` (that
        holds `text`, when given)."""
        r = check(*args)
        self.assertEqual(r.returncode, returncode, r.stdout + r.stderr)
        found = self.lines(r, severity, rule, rank)
        self.assertTrue(found, "no 'rank %s: %s [%s]' line in:\n%s" % (rank, severity, rule, r.stdout))
        if text:
            self.assertTrue(any(text in l for l in found), "%r not in %s" % (text, found))
        return r

    def assert_error(self, args, rule, rank=0, text=None):
        return self.assert_finding(args, "error", 1, rule, rank, text)

    def assert_warning(self, args, rule, rank=0, text=None):
        r = self.assert_finding(args, "warning", 0, rule, rank, text)
        self.assertNotIn(" error [", r.stdout)
        strict = check("--strict", *args)
        self.assertEqual(strict.returncode, 1, strict.stdout)
        self.assertTrue(self.lines(strict, "warning", rule, rank))
        return r

    def errors_in(self, result):
        return [l for l in result.stdout.splitlines() if ": error [" in l]

    def write(self, captures, **kw):
        write_capture(self.root, captures, **kw)
        return self.root

    def edit(self, path, fn):
        with open(path) as f:
            text = f.read()
        new = fn(text)
        self.assertNotEqual(new, text, "the edit changed nothing in " + path)
        with open(path, "w") as f:
            f.write(new)


class GoodSmallCaptures(CheckCase):
    def test_gpu_capture_passes_even_strict(self):
        r = check("--strict", self.write([RankCapture(0, 2, gpu=True), RankCapture(1, 2, gpu=True)]))
        self.assertEqual(r.returncode, 0, r.stdout)
        self.assertIn("rank 0: ok; steps 3-4 in both files; rf_id join 10/10 (100.0%)", r.stdout)
        self.assertIn("rank 1: ok;", r.stdout)
        self.assertIn("2 ranks, 0 errors, 0 warnings", r.stdout)

    def test_each_folder_of_the_pair_checks_the_pair(self):
        self.write([RankCapture(0, gpu=True)])
        for sub in ("0_chakra", "0_kineto"):
            r = check("--strict", os.path.join(self.root, sub))
            self.assertEqual(r.returncode, 0, r.stdout)
            self.assertIn("rank 0: ok; steps 3-4 in both files", r.stdout)

    def test_explicit_files_are_paired_by_rank(self):
        self.write([RankCapture(0, gpu=True)])
        r = check("--strict", os.path.join(self.root, "0_kineto", "rank-0.json"),
                  os.path.join(self.root, "0_chakra", "rank-0.json"))
        self.assertEqual(r.returncode, 0, r.stdout)
        self.assertIn("rf_id join 10/10", r.stdout)

    def test_gzip_device_trace_is_read(self):
        self.write([RankCapture(0, gpu=True)])
        plain = os.path.join(self.root, "0_kineto", "rank-0.json")
        with open(plain, "rb") as f, gzip.open(plain + ".gz", "wb") as g:
            g.write(f.read())
        os.remove(plain)
        r = check("--strict", self.root)
        self.assertEqual(r.returncode, 0, r.stdout)
        self.assertIn("steps 3-4 in both files", r.stdout)

    def test_later_runs_are_separate_groups(self):
        write_capture(self.root, [RankCapture(0, gpu=True)], job="7")
        write_capture(self.root, [RankCapture(0, gpu=True)], job="7")
        os.rename(os.path.join(self.root, "7_chakra"), os.path.join(self.root, "7_chakra.1"))
        os.rename(os.path.join(self.root, "7_kineto"), os.path.join(self.root, "7_kineto.1"))
        write_capture(self.root, [RankCapture(0, gpu=True)], job="7")
        r = check(self.root)
        self.assertEqual(r.returncode, 0, r.stdout)
        self.assertIn("rank 0 (7): ok", r.stdout)
        self.assertIn("rank 0 (7.1): ok", r.stdout)

    def test_json_output(self):
        cap = RankCapture(0)
        r = check("--json", self.write([cap]))
        self.assertEqual(r.returncode, 0, r.stdout)
        doc = json.loads(r.stdout)
        self.assertEqual(doc["status"], 0)
        self.assertEqual(doc["warnings"], 0)  # a CPU capture: host-only is a note
        rep = doc["reports"][0]
        self.assertEqual(rep["rank"], 0)
        self.assertEqual(rep["figures"]["steps_et"], [3, 4])
        self.assertEqual(rep["figures"]["rf_id_join"]["share"], 1.0)
        self.assertEqual([f["rule"] for f in rep["findings"]], ["link.host_only"])


class ErrorFixtures(CheckCase):
    """Each edits one thing of a good capture; check fails with that rule."""

    def dev(self, rank=0):
        return os.path.join(self.root, "0_kineto", "rank-%d.json" % rank)

    def et(self, rank=0):
        return os.path.join(self.root, "0_chakra", "rank-%d.json" % rank)

    def test_unfinalized_et_cut_before_its_root(self):
        cap = RankCapture(0, gpu=True)
        text = cap.et_text()
        cut = text[:text.index('"[pytorch|profiler|execution_trace|process]"')]
        cut = cut[:cut.rindex("{")]  # torch stops after the last op node and its comma
        self.write([cap], et_text={0: cut})
        self.assert_error([self.root], "et.finalized", text="without its root node 1 and finish_ts")

    def test_et_without_finish_ts_and_root(self):
        cap = RankCapture(0, gpu=True)
        nodes = [n for n in cap.et_nodes() if n["id"] != 1]
        doc = json.loads(cap.et_text(nodes))
        del doc["finish_ts"]
        self.write([cap], et_text={0: json.dumps(doc)})
        self.assert_error([self.root], "et.finalized", text="no finish_ts and no root node 1")

    def test_et_not_json(self):
        cap = RankCapture(0, gpu=True)
        self.write([cap], et_text={0: cap.et_text().replace('"pid":', '"pid" ', 1)})
        self.assert_error([self.root], "et.json")

    def test_et_node_without_an_attr(self):
        cap = RankCapture(0, gpu=True)
        nodes = cap.et_nodes()
        nodes[3]["attrs"] = [a for a in nodes[3]["attrs"] if a["name"] != "fw_tid"]
        self.write([cap], et_text={0: cap.et_text(nodes)})
        self.assert_error([self.root], "et.attrs", text="lacks fw_tid")

    def test_missing_profiler_step(self):
        cap = RankCapture(0, gpu=True)
        cap.spans = [s for s in cap.spans if not s.name.startswith("ProfilerStep#")]
        self.assert_error([self.write([cap])], "device.profiler_step")

    def test_missing_record_function_id(self):
        cap = RankCapture(0, gpu=True)
        span = cap.find("aten::addmm", 1)
        self.write([cap])
        self.edit(self.dev(), lambda t: t.replace(', "Record function id": %d}' % span.rf_id, '}'))
        r = self.assert_error([self.root], "device.rf_id", text="cpu_op 'aten::addmm'")
        # Its ET node now finds nothing either: 9 of 10 is below 99%.
        self.assertTrue(self.lines(r, "error", "join.rf_id", 0), r.stdout)
        self.assertIn("rf_id join 9/10 (90.0%)", r.stdout)

    def test_kernel_without_external_id(self):
        cap = RankCapture(0, gpu=True)
        kernel = cap.find("void gemm_kernel()")
        kernel.ext = None
        self.assert_error([self.write([cap])], "gpu.external_id", text="kernel 'void gemm_kernel()'")

    def test_duplicate_launch_correlation(self):
        cap = RankCapture(0, gpu=True)
        first, second = [s for s in cap.spans if s.cat == "cuda_runtime"][:2]
        second.args["correlation"] = first.args["correlation"]
        self.assert_error([self.write([cap])], "gpu.correlation")

    def test_launch_name_with_cupti_version_suffix(self):
        cap = RankCapture(0, gpu=True)
        cap.find("cudaLaunchKernel").name = "cudaLaunchKernel_v7000"
        self.assert_error([self.write([cap])], "gpu.launch_name", text="cudaLaunchKernel_v7000")

    def test_stream_on_a_cpu_event_and_none_on_a_kernel(self):
        cap = RankCapture(0, gpu=True)
        cap.find("aten::linear").args["stream"] = 7
        del cap.find("void gemm_kernel()").args["stream"]
        r = self.assert_error([self.write([cap])], "gpu.stream")
        self.assertEqual(len(self.lines(r, "error", "gpu.stream", 0)), 2)

    def test_compact_rank_zero(self):
        self.write([RankCapture(0, 2, gpu=True), RankCapture(1, 2, gpu=True)])
        self.edit(self.dev(0), lambda t: t.replace('"rank": 0', '"rank":0', 1))
        r = self.assert_error([self.root], "device.rank", rank=0, text="silently reads rank 0")
        self.assertFalse(self.lines(r, "error", "device.rank", 1))

    def test_rank_regex_reading_another_rank(self):
        self.write([RankCapture(0, 2, gpu=True), RankCapture(1, 2, gpu=True)])
        self.edit(self.dev(1), lambda t: t.replace('"rank": 1', '"rank":1', 1).replace(
            '"schemaVersion": 1,', '"schemaVersion": 1, "note": {"rank": 0},', 1))
        self.assert_error([self.root], "device.rank", rank=1, text="reads rank 0, but this file is rank 1")

    def test_steps_differ_between_the_files(self):
        cap = RankCapture(0, gpu=True)
        # The ET loses step 4's Optimizer.step# node and its child.
        opt = cap.find("Optimizer.step#SGD.step", 1)
        nodes = cap.et_nodes()
        drop = {n["id"] for n in nodes if n["attrs"][0]["value"] in (opt.rf_id, opt.rf_id + 1)}
        nodes = [n for n in nodes if n["id"] not in drop]
        self.write([cap], et_text={0: cap.et_text(nodes)})
        r = self.assert_error([self.root], "steps.match", text="the ET holds steps 3, the device trace holds steps 3-4")
        self.assertEqual(len(self.errors_in(r)), 1, r.stdout)

    def add_job_profiler_steps(self, cap, numbers, name="ProfilerStep#%d"):
        """The job's own torch.profiler: a step record of its own in each step
        (prof.step() at each step's end opens the next), with its numbers."""
        for (t0, n) in zip([s.start for s in cap.spans if s.step is not None], numbers):
            cap._op("user_annotation", name % n, t0 + 5_000, t0 + 1_000_000 + 5_000, None)

    def test_the_jobs_own_profiler_steps_kept_under_their_name(self):
        # Issue #34 item 3: what the capture of a job running its own
        # torch.profiler held, with check saying 0 errors.
        for numbers, text in (((3, 4), "by start time 3,3,4,4: 3,4 more than once"),
                              ((0, 1), "by start time 3,0,4,1: out of order")):
            with self.subTest(numbers=numbers):
                cap = RankCapture(0, gpu=True)
                self.add_job_profiler_steps(cap, numbers)
                self.root = ct.temp_dir(self)
                r = self.assert_error([self.write([cap])], "steps.profiler_step", text=text)
                line = self.lines(r, "error", "steps.profiler_step", 0)[0]
                self.assertIn("torch.profiler", line)
                self.assertIn("job:ProfilerStep#N", line)
                # The one cause, not a window to re-capture.
                self.assertFalse(self.lines(r, "error", "steps.match", 0), r.stdout)

    def test_the_jobs_own_profiler_steps_renamed_pass(self):
        cap = RankCapture(0, gpu=True)
        self.add_job_profiler_steps(cap, (0, 1), name="job:ProfilerStep#%d")
        r = check("--strict", self.write([cap]))
        self.assertEqual(r.returncode, 0, r.stdout)
        self.assertIn("steps 3-4 in both files", r.stdout)

    def test_partial_leftover(self):
        self.write([RankCapture(0, gpu=True)])
        shutil.copy(self.dev(), self.dev() + ".partial")
        self.assert_error([self.root], "files.partial", text="0_kineto/rank-0.json.partial")

    def test_a_partial_its_writer_still_writes_is_in_progress_not_left_over(self):
        # Issue #49 case 10: check while the window is open said the .partial
        # files were left over from a crash. The shim holds a write lock on
        # a .partial it writes (fcntl OFD); a lock held here stands for it.
        import fcntl
        self.write([RankCapture(0, gpu=True)])
        partial = self.dev() + ".partial"
        shutil.copy(self.dev(), partial)
        with open(partial, "r+") as f:
            fcntl.fcntl(f, getattr(fcntl, "F_OFD_SETLK", 37), struct_flock(fcntl.F_WRLCK))
            r = check(self.root)
            self.assertEqual(r.returncode, 0, r.stdout)
            self.assertTrue(self.lines(r, "info", "files.in_progress", 0), r.stdout)
            self.assertNotIn("files.partial", r.stdout)
        # Its writer gone (the lock went with it): left over.
        self.assert_error([self.root], "files.partial", text="0_kineto/rank-0.json.partial")

    def test_child_with_its_parents_start_and_end(self):
        cap = RankCapture(0, gpu=True)
        child, parent = cap.find("aten::addmm"), cap.find("aten::linear")
        child.start, child.end = parent.start, parent.end
        self.assert_error([self.write([cap])], "span.equal")

    def test_child_sharing_one_end_passes(self):
        cap = RankCapture(0, gpu=True)
        child, parent = cap.find("aten::addmm"), cap.find("aten::linear")
        child.start = parent.start
        r = check("--strict", self.write([cap]))
        self.assertEqual(r.returncode, 0, r.stdout)

    def test_missing_rank(self):
        self.write([RankCapture(r, 3, gpu=True) for r in range(3)])
        os.remove(self.dev(1))
        os.remove(self.et(1))
        self.assert_error([self.root], "ranks.missing", rank=1, text="rank 1 of world size 3 has no files")

    def test_rank_in_one_folder_only(self):
        self.write([RankCapture(0, 2, gpu=True), RankCapture(1, 2, gpu=True)])
        os.remove(self.et(1))
        self.assert_error([self.root], "ranks.unpaired", rank=1, text="has no ET beside it")

    def test_device_trace_cut_short(self):
        cap = RankCapture(0, gpu=True)
        text = cap.device_text()
        self.write([cap], device_text={0: text[:len(text) // 2]})
        self.assert_error([self.root], "device.json", text="ends early")

    def test_et_ops_missing_from_the_device_trace(self):
        cap = RankCapture(0, gpu=True)
        nodes = cap.et_nodes()
        for n in nodes[1:6]:
            n["attrs"][0]["value"] += 1000  # rf_ids no device event carries
        self.write([cap], et_text={0: cap.et_text(nodes)})
        self.assert_error([self.root], "join.rf_id", text="of 10 ET op nodes")


class WarningFixtures(CheckCase):
    """Each warning of docs/trace-format.md: exit 0 with the line, 1 with --strict."""

    def test_host_only_capture_of_a_process_with_cuda(self):
        cap = RankCapture(0)
        cap.meta["device_trace"]["cupti"] = "ok"
        self.assert_warning([self.write([cap])], "link.host_only",
                            text="Chakra's own linker (chakra_trace_link) will refuse this pair (the HTA "
                                 "parser inside it fails with KeyError 'cuda_runtime'); use chakrashim link. "
                                 "HTA's own GPU breakdowns need GPU events (docs/report.md)")

    def test_schema_the_converter_refuses(self):
        cap = RankCapture(0, gpu=True)
        cap.et_schema = "1.0.4"
        self.assert_warning([self.write([cap])], "et.schema", text="which chakra_converter will refuse")

    def test_schema_warning_names_the_torch_that_wrote_it_and_the_reason(self):
        cap = RankCapture(0, gpu=True)
        cap.et_schema = "1.0.1"
        self.assert_warning([self.write([cap])], "et.schema",
                            text="has schema 1.0.1 (written by torch 2.0 or 2.1, whose nodes carry rf_id as a "
                                 "field, not in attrs), which chakra_converter will refuse: the converter parses nodes "
                                 "only of 1.0.2, 1.0.3, 1.1.0 and 1.1.1, each with the -chakra.0.0.4 suffix")

    def test_schema_of_torch_2_4_is_accepted_by_the_converter(self):
        cap = RankCapture(0, gpu=True)
        cap.et_schema = "1.1.0-chakra.0.0.4"
        r = check(self.write([cap]))
        self.assertNotIn("[et.schema]", r.stdout)

    def test_ranks_absent_because_of_chakra_ranks(self):
        caps = [RankCapture(r, 4, gpu=True, ranks_filter="0,2") for r in (0, 2)]
        r = self.assert_warning([self.write(caps)], "ranks.filtered", rank=None,
                                text="ranks 1,3 of world size 4 are absent because of CHAKRA_RANKS=0,2")
        self.assertIn("rank 2: ok", r.stdout)

    def test_filtered_rank_still_missing_is_an_error(self):
        caps = [RankCapture(0, 3, gpu=True, ranks_filter="0-1")]
        r = self.assert_error([self.write(caps)], "ranks.missing", rank=1)
        self.assertTrue(self.lines(r, "warning", "ranks.filtered"))

    def test_partial_last_step_explains_the_missing_step(self):
        cap = RankCapture(0, gpu=True)
        cap.meta["steps"]["partial_last_step"] = 4
        cap.meta["steps"]["reason"] = "signal:SIGTERM"
        opt = cap.find("Optimizer.step#SGD.step", 1)
        nodes = [n for n in cap.et_nodes() if n["attrs"][0]["value"] not in (opt.rf_id, opt.rf_id + 1)]
        self.write([cap], et_text={0: cap.et_text(nodes)})
        self.assert_warning([self.root], "steps.partial_last", text="step 4 is partial (reason: signal:SIGTERM)")

    def test_dropped_cupti_records(self):
        cap = RankCapture(0, gpu=True)
        cap.meta["device_trace"]["dropped_records"] = 12
        self.assert_warning([self.write([cap])], "device.dropped", text="12 CUPTI records dropped")

    def test_truncated_window(self):
        cap = RankCapture(0, gpu=True)
        cap.meta["device_trace"]["truncated_at"] = 1950.5
        cap.meta["steps"]["reason"] = "memory_cap"
        self.assert_warning([self.write([cap])], "device.truncated", text="reason: memory_cap")

    def test_cut_short_window(self):
        cap = RankCapture(0, gpu=True)
        cap.meta["steps"]["cut_short"] = True
        cap.meta["steps"]["reason"] = "exit"
        self.assert_warning([self.write([cap])], "device.truncated", text="reason: exit")


class EtOnlyCaptures(CheckCase):
    """What CHAKRA_DEVICE_TRACE=0 writes: JOB_chakra/ and no device trace, so
    no metadata; the world size comes from torch's process-group node."""

    def write_ets(self, world, ranks, process_groups=True):
        caps = [RankCapture(r, world) for r in ranks]
        texts = {}
        for c in caps:
            nodes = c.et_nodes()
            if process_groups:
                config = [{"pg_name": "0", "pg_desc": "default_pg", "backend_config": "cpu:gloo", "ranks": [],
                           "group_size": world, "group_count": 2},
                          {"pg_name": "1", "pg_desc": "undefined", "backend_config": "cpu:gloo", "ranks": [0, 1],
                           "group_size": 2, "group_count": 2}]
                pg = dict(nodes[0], id=99, name="## process_group:init ##", ctrl_deps=2,
                          inputs={"values": [json.dumps(config)], "shapes": [[]], "types": ["String"],
                                  "strides": [[]]})
                nodes.insert(1, pg)
            texts[c.rank] = c.et_text(nodes)
        self.write(caps, et_text=texts)
        shutil.rmtree(os.path.join(self.root, "0_kineto"))
        return self.root

    def test_every_rank_there_passes_without_an_unpaired_error(self):
        r = check("--strict", self.write_ets(3, range(3)))
        self.assertEqual(r.returncode, 0, r.stdout)
        for rank in range(3):
            self.assertIn("rank %d: ok" % rank, r.stdout)

    def test_a_missing_rank_is_named_from_the_process_groups_as_a_warning(self):
        # A warning: the ETs do not record CHAKRA_RANKS, which may have left it out.
        self.assert_warning([self.write_ets(4, (0, 2, 3))], "ranks.missing", rank=1,
                            text="rank 1 of world size 4 (from the ETs' process groups) has no ET; without "
                                 "device traces the capture does not record whether CHAKRA_RANKS left it out")

    def test_without_a_process_group_node_no_rank_is_named(self):
        r = check("--strict", self.write_ets(4, (0, 2), process_groups=False))
        self.assertEqual(r.returncode, 0, r.stdout)
        self.assertNotIn("ranks.missing", r.stdout)

    def test_a_device_trace_missing_beside_others_is_still_an_error(self):
        self.write([RankCapture(r, 2, gpu=True) for r in range(2)])
        os.remove(os.path.join(self.root, "0_kineto", "rank-1.json"))
        self.assert_error([self.root], "ranks.unpaired", rank=1, text="has no device trace beside it")


class GoldenPair(CheckCase):
    """The real Kineto device trace (10 MB, GPU, float times) and its ET."""

    def setUp(self):
        super().setUp()
        if not os.path.isfile(os.path.join(GOLDEN, "device.0.json.gz")):
            self.skipTest(ct.golden_missing(GOLDEN))
        self.host_gz = os.path.join(GOLDEN, "host.0.json.gz")
        self.dev_gz = os.path.join(GOLDEN, "device.0.json.gz")

    def unpack(self):
        host, dev = os.path.join(self.root, "host.0.json"), os.path.join(self.root, "device.0.json")
        for src, dst in ((self.host_gz, host), (self.dev_gz, dev)):
            with gzip.open(src, "rb") as f, open(dst, "wb") as g:
                shutil.copyfileobj(f, g)
        return host, dev

    def test_golden_pair_passes(self):
        r = check("--strict", self.host_gz, self.dev_gz)
        self.assertEqual(r.returncode, 0, r.stdout)
        self.assertIn("rank 0: ok; steps 4-6 in both files; rf_id join 14388/14388 (100.0%)", r.stdout)
        self.assertIn("40573 events, 3774 GPU ops", r.stdout)
        host, dev = self.unpack()
        plain = check("--strict", host, dev)
        self.assertEqual(plain.returncode, 0, plain.stdout)
        self.assertNotIn("et.gzip", plain.stdout)

    def edit_events(self, dev, fn):
        with open(dev) as f:
            doc = json.load(f)
        fn(doc["traceEvents"])
        with open(dev, "w") as f:
            json.dump(doc, f)

    def test_golden_kernel_without_external_id(self):
        host, dev = self.unpack()
        def drop(events):
            next(e for e in events if e.get("cat") == "kernel")["args"].pop("External id")
        self.edit_events(dev, drop)
        self.assert_error([host, dev], "gpu.external_id", text="1 kernel/memcpy without External id")

    def test_golden_duplicate_correlation(self):
        host, dev = self.unpack()
        def dup(events):
            launches = [e for e in events if e.get("cat") == "cuda_runtime"]
            launches[1]["args"]["correlation"] = launches[0]["args"]["correlation"]
        self.edit_events(dev, dup)
        self.assert_error([host, dev], "gpu.correlation")

    def test_golden_missing_record_function_id(self):
        host, dev = self.unpack()
        def drop(events):
            next(e for e in events if e.get("cat") == "cpu_op")["args"].pop("Record function id")
        self.edit_events(dev, drop)
        r = self.assert_error([host, dev], "device.rf_id")
        self.assertIn("rf_id join 14387/14388", r.stdout)

    def test_golden_missing_profiler_step(self):
        host, dev = self.unpack()
        def drop(events):
            events[:] = [e for e in events if not e.get("name", "").startswith("ProfilerStep#")]
        self.edit_events(dev, drop)
        self.assert_error([host, dev], "device.profiler_step")

    def test_golden_unfinalized_et(self):
        host, dev = self.unpack()
        with open(host) as f:
            text = f.read()
        with open(host, "w") as f:
            f.write(text[:len(text) * 2 // 3])
        self.assert_error([host, dev], "et.finalized")


class RealTorchCapture(CheckCase):
    """A real torch.profiler + ExecutionTraceObserver CPU capture."""

    @classmethod
    def setUpClass(cls):
        cls.dir = ct.tempfile.mkdtemp(prefix="chakra-torch-")
        script = os.path.join(os.path.dirname(__file__), "make_torch_trace.py")
        r = ct.run([ct.PYTHON, script, cls.dir], env=ct.clean_env(), timeout=300)
        cls.made = r.returncode == 0 and os.path.isfile(os.path.join(cls.dir, "kineto.json"))
        cls.why = r.stderr[-2000:]

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    def setUp(self):
        super().setUp()
        ct.require(self, ct.WITH_TORCH, "built without torch")
        self.assertTrue(self.made, "torch capture failed: " + self.why)
        self.et = os.path.join(self.dir, "et.json")
        self.dev = os.path.join(self.dir, "kineto.json")

    def test_real_cpu_capture_passes_strict_with_the_host_only_note(self):
        r = check("--strict", self.et, self.dev)
        self.assertEqual(r.returncode, 0, r.stdout)
        self.assertTrue(self.lines(r, "info", "link.host_only", 0), r.stdout)
        self.assertRegex(r.stdout, r"rank 0: ok; steps (\d+-\d+) in both files; "
                                   r"rf_id join (\d+)/\2 \(100.0%\)")

    def test_real_capture_in_the_folder_layout(self):
        os.makedirs(os.path.join(self.root, "5_chakra"))
        os.makedirs(os.path.join(self.root, "5_kineto"))
        shutil.copy(self.et, os.path.join(self.root, "5_chakra", "rank-0.json"))
        shutil.copy(self.dev, os.path.join(self.root, "5_kineto", "rank-0.json"))
        r = check(self.root)
        self.assertEqual(r.returncode, 0, r.stdout)
        self.assertIn("info [device.no_rank]", r.stdout)

    def test_nemos_own_output_is_said_for_what_it_is(self):
        # Issue #49 case 9: NeMo's chakra_profile (default active_steps=1)
        # writes an ET of steps 0-4 and a device trace of step 4: check said
        # the two were not one rank's pair, and "steps 4 in both files".
        out = os.path.join(self.root, "nemo")
        os.makedirs(out)
        script = os.path.join(os.path.dirname(__file__), "make_torch_trace.py")
        made = ct.run([ct.PYTHON, script, out, "--nemo"], env=ct.clean_env(), timeout=300)
        self.assertEqual(made.returncode, 0, made.stderr)
        r = check(os.path.join(out, "et.json"), os.path.join(out, "kineto.json"))
        self.assertEqual(r.returncode, 1, r.stdout)
        said = self.lines(r, "error", "steps.match", 0)
        self.assertEqual(len(said), 1, r.stdout)
        # The last prof.step() opens one more ProfilerStep#N, in the ET too.
        self.assertRegex(said[0], r"the ET holds steps 0-(\d) \(its ProfilerStep#N nodes\), the device trace only "
                                  r"\1: the device trace is the last cycle of a torch.profiler schedule")
        for wrong in ("pair.mismatch", "join.rf_id", "join.op_count", "in both files"):
            self.assertNotIn(wrong, r.stdout)
        # report: torch.profiler's ProfilerStep#0 is a captured step, not "the
        # job's setup" (only chakrashim counts steps from the job's start).
        every = os.path.join(self.root, "every")
        os.makedirs(every)
        made = ct.run([ct.PYTHON, script, every, "--all-steps"], env=ct.clean_env(), timeout=300)
        self.assertEqual(made.returncode, 0, made.stderr)
        rep = ct.run([ct.CLI, "report", os.path.join(every, "et.json"), os.path.join(every, "kineto.json")],
                     env=ct.clean_env())
        self.assertEqual(rep.returncode, 0, rep.stderr)
        self.assertRegex(rep.stdout, r"\n  0 ")
        self.assertNotIn("the job's setup", rep.stdout)

    def test_real_et_cut_short(self):
        et = os.path.join(self.root, "et.json")
        with open(self.et) as f:
            text = f.read()
        with open(et, "w") as f:
            f.write(text[:text.rindex('"[pytorch|profiler|execution_trace|process]"')])
        self.assert_error([et, self.dev], "et.finalized")

    def test_real_steps_differ(self):
        # Drop the last ProfilerStep#N: its Optimizer.step# now falls outside.
        dev = os.path.join(self.root, "kineto.json")
        with open(self.dev) as f:
            doc = json.load(f)
        last = max(e["name"] for e in doc["traceEvents"] if e.get("name", "").startswith("ProfilerStep#"))
        doc["traceEvents"] = [e for e in doc["traceEvents"] if e.get("name") != last]
        with open(dev, "w") as f:
            json.dump(doc, f)
        self.assert_error([self.et, dev], "steps.match", text="outside every ProfilerStep#N")


class Usage(CheckCase):
    def test_help(self):
        r = check("--help")
        self.assertEqual(r.returncode, 0)
        self.assertIn("usage: chakrashim check", r.stdout)
        self.assertIn("--strict", r.stdout)

    def test_usage_errors_exit_2_with_one_line_and_a_pointer_to_help(self):
        for args in ([], ["--bogus", self.root], [os.path.join(self.root, "nope")],
                     ["--step-marker"], ["--jobs", "0", self.root]):
            r = check(*args)
            self.assertEqual(r.returncode, 2, (args, r.stdout, r.stderr))
            self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)
            self.assertIn("(see 'chakrashim check --help')", r.stderr)
            self.assertEqual(r.stdout, "")

    def test_a_mistyped_option_gets_a_suggestion(self):
        r = check("--strcit", self.root)
        self.assertEqual(r.returncode, 2)
        self.assertIn("unknown option '--strcit' (did you mean --strict?)", r.stderr)

    def test_quiet_prints_problems_only(self):
        r = check("--quiet", self.write([RankCapture(0, gpu=True)]))
        self.assertEqual(r.returncode, 0)
        self.assertEqual(r.stdout, "")
        os.remove(os.path.join(self.root, "0_chakra", "rank-0.json"))
        r = check("--quiet", self.root)
        self.assertEqual(len(r.stdout.splitlines()), 1, r.stdout)
        self.assertIn("error [ranks.unpaired]", r.stdout)

    def test_no_progress_bar_when_stderr_is_not_a_terminal(self):
        r = check(self.write([RankCapture(0, gpu=True)]))
        self.assertEqual(r.stderr, "")

    def test_step_marker_option(self):
        cap = RankCapture(0, gpu=True)
        for s in cap.spans:
            if s.name.startswith("Optimizer.step#"):
                s.name = "MyLoop.step"
        self.write([cap])
        self.assert_error([self.root], "steps.match", text="no outermost 'Optimizer.step#' node")
        r = check("--strict", "--step-marker", "MyLoop.step", self.root)
        self.assertEqual(r.returncode, 0, r.stdout)

    def test_file_of_neither_kind(self):
        other = os.path.join(self.root, "notes.json")
        with open(other, "w") as f:
            f.write('{"hello": 1}')
        r = check(other)
        self.assertEqual(r.returncode, 1, r.stdout)
        self.assertTrue(self.lines(r, "error", "files.unreadable"))


class WrongAnswers(CheckCase):
    """Issue #23's wrong verdicts; each test fails on the code before the fix."""

    def test_an_empty_folder_is_an_error_that_says_where_it_looked(self):
        for args in ([self.root], ["--strict", self.root]):
            r = check(*args)
            self.assertEqual(r.returncode, 1, r.stdout)
            self.assertIn("error [files.none] no capture in " + self.root, r.stdout)
            # What it found there, and what it expected (issue #38).
            self.assertIn(self.root + ": it is empty; expected JOB_chakra/ and JOB_kineto/ folders", r.stdout)

    def test_a_capture_one_level_down_is_named(self):
        write_capture(os.path.join(self.root, "exp1"), [RankCapture(0, gpu=True)])
        r = check(self.root)
        self.assertEqual(r.returncode, 1, r.stdout)
        self.assertIn("captures one level down: " + os.path.join(self.root, "exp1"), r.stdout)

    def test_explicit_files_of_different_ranks_are_unpaired(self):
        write_capture(self.root, [RankCapture(0, 2, gpu=True), RankCapture(1, 2, gpu=True)])
        r = check(os.path.join(self.root, "0_chakra", "rank-0.json"), os.path.join(self.root, "0_kineto", "rank-1.json"))
        self.assertEqual(r.returncode, 1, r.stdout)
        self.assertTrue(self.lines(r, "error", "ranks.unpaired", 0), r.stdout)
        self.assertTrue(self.lines(r, "error", "ranks.unpaired", 1), r.stdout)
        self.assertNotIn("rank 0: ok", r.stdout)
        # One kind alone is still fine to check.
        r = check(os.path.join(self.root, "0_kineto", "rank-1.json"))
        self.assertEqual(r.returncode, 0, r.stdout)

    def test_two_runs_of_a_one_rank_job_are_two_runs_not_two_ranks(self):
        write_capture(self.root, [RankCapture(0, gpu=True)])
        os.rename(os.path.join(self.root, "0_chakra"), os.path.join(self.root, "0_chakra.1"))
        os.rename(os.path.join(self.root, "0_kineto"), os.path.join(self.root, "0_kineto.1"))
        write_capture(self.root, [RankCapture(0, gpu=True)])
        r = check(self.root)
        self.assertEqual(r.returncode, 0, r.stdout)
        self.assertNotIn("2 ranks", r.stdout)
        self.assertIn("chakrashim check: 2 runs: 0 (1 rank), 0.1 (1 rank); 0 errors, 0 warnings", r.stdout)
        one = check(os.path.join(self.root, "0_kineto.1"))
        self.assertIn("1 rank, 0 errors, 0 warnings (run 0.1)", one.stdout)

    def test_strict_passes_a_cpu_capture_and_fails_a_gpu_one_without_launches(self):
        r = check("--strict", self.write([RankCapture(0)]))
        self.assertEqual(r.returncode, 0, r.stdout)
        self.assertTrue(self.lines(r, "info", "link.host_only", 0), r.stdout)
        # CUDA was there (a GPU listed, CUPTI ok) but no launch was recorded.
        cap = RankCapture(0)
        cap.meta["device_trace"]["cupti"] = "ok"
        write_capture(self.root, [cap])
        self.assert_warning([self.root], "link.host_only", text="though the process had CUDA")


class CaptureBesideEtFiles(CheckCase):
    """Issue #49 case 5: `convert --prefix ROOT/nc ROOT` put .et files in the
    trace root; `check ROOT` then checked those alone ("2 .et files, 0
    errors") and never the capture."""

    def test_both_the_capture_and_the_et_files_are_checked(self):
        write_many(self.root, 2)
        conv = ct.run([ct.CLI, "convert", "--prefix", os.path.join(self.root, "nc"), self.root], env=ct.clean_env())
        if conv.returncode != 0 and "not built" in conv.stderr + conv.stdout:
            self.skipTest("convert is not built here")
        self.assertEqual(conv.returncode, 0, conv.stdout + conv.stderr)
        self.assertTrue([f for f in os.listdir(self.root) if f.endswith(".et")])
        r = check(self.root)
        self.assertEqual(r.returncode, 0, r.stdout)
        self.assertIn("chakrashim check: 2 ranks", r.stdout)
        self.assertIn("2 .et files", r.stdout)
        # A broken device trace fails the check again.
        cut_in_half(os.path.join(self.root, "0_kineto", "rank-1.json"))
        r = check(self.root)
        self.assertEqual(r.returncode, 1, r.stdout)
        self.assertTrue(self.lines(r, "error", "device.json", 1), r.stdout)
        doc = json.loads(check("--json", self.root).stdout)
        self.assertEqual(sorted(doc), ["capture", "et_files"])


class PairMismatch(CheckCase):
    """An ET and a device trace paired by name or folder, but written by
    another rank or process: check says so as link does (pair.mismatch)."""

    def setUp(self):
        super().setUp()
        # Ranks of one job run in their own processes: pids 4242 and 4243.
        self.write([RankCapture(0, 2, gpu=True, pid=4242), RankCapture(1, 2, gpu=True, pid=4243)])
        self.et = lambda r: os.path.join(self.root, "0_chakra", "rank-%d.json" % r)
        self.dev = lambda r, folder="0_kineto": os.path.join(self.root, folder, "rank-%d.json" % r)

    def assert_mismatch(self, r, rank, et, dev, why):
        self.assertEqual(r.returncode, 1, r.stdout)
        found = self.lines(r, "error", "pair.mismatch", rank)
        self.assertTrue(found, r.stdout)
        self.assertIn("%s and %s are not one rank's pair: %s" % (et, dev, why), found[0])
        self.assertNotRegex(r.stdout, r"(?m)^rank %d: ok" % rank)

    def test_the_true_pairs_pass(self):
        r = check("--strict", self.root)
        self.assertEqual(r.returncode, 0, r.stdout)
        self.assertFalse(self.lines(r, "error", "pair.mismatch"), r.stdout)

    def test_explicit_files_of_two_ranks_paired_by_their_names(self):
        # Names without ranks pair as rank 0: only the pids tell them apart.
        et, dev = os.path.join(self.root, "et.json"), os.path.join(self.root, "device.json")
        shutil.copy(self.et(0), et)
        shutil.copy(self.dev(1), dev)
        self.assert_mismatch(check(et, dev), 0, et, dev, "the ET was written by pid 4242, the device trace by pid 4243")
        # Names with the same rank: the device trace says which rank it is.
        other = os.path.join(self.root, "other", "rank-0.json")
        os.makedirs(os.path.dirname(other))
        shutil.copy(self.dev(1), other)
        self.assert_mismatch(check(self.et(0), other), 0, self.et(0), other,
                             "the ET was written by pid 4242, the device trace by pid 4243; "
                             "the ET is rank 0's by its name, the device trace says rank 1")

    def test_device_traces_swapped_between_two_ranks_in_a_folder(self):
        swap = os.path.join(self.root, "swap.json")
        os.rename(self.dev(0), swap)
        os.rename(self.dev(1), self.dev(0))
        os.rename(swap, self.dev(1))
        r = check(self.root)
        for rank, other, pid in ((0, 1, 4243), (1, 0, 4242)):
            self.assert_mismatch(r, rank, "0_chakra/rank-%d.json" % rank, "0_kineto/rank-%d.json" % rank,
                                 "the ET was written by pid %d, the device trace by pid %d; the ET is rank %d's "
                                 "by its name, the device trace says rank %d" % (4242 + rank, pid, rank, other))

    def test_device_traces_swapped_between_two_runs_folders(self):
        # Run 0.1 of the same job: other processes, same ranks and ops. No
        # other rule can tell its rank 0 from run 0's.
        later = os.path.join(self.root, "later")
        write_capture(later, [RankCapture(0, 2, gpu=True, pid=5000), RankCapture(1, 2, gpu=True, pid=5001)])
        for kind in ("chakra", "kineto"):
            os.rename(os.path.join(later, "0_" + kind), os.path.join(self.root, "0_%s.1" % kind))
        os.rmdir(later)
        swap, run1 = os.path.join(self.root, "swap.json"), self.dev(0, "0_kineto.1")
        os.rename(self.dev(0), swap)
        os.rename(run1, self.dev(0))
        os.rename(swap, run1)
        r = check(self.root)
        self.assertEqual(r.returncode, 1, r.stdout)
        found = [l for l in r.stdout.splitlines() if "error [pair.mismatch]" in l]
        self.assertEqual(len(found), 2, r.stdout)
        self.assertIn("rank 0 (0): error [pair.mismatch] 0_chakra/rank-0.json and 0_kineto/rank-0.json are not one "
                      "rank's pair: the ET was written by pid 4242, the device trace by pid 5000", r.stdout)
        self.assertIn("rank 0 (0.1): error [pair.mismatch] 0_chakra.1/rank-0.json and 0_kineto.1/rank-0.json are "
                      "not one rank's pair: the ET was written by pid 5000, the device trace by pid 4242", r.stdout)
        self.assertIn("rank 1 (0): ok", r.stdout)


class ManyRanks(CheckCase):
    """Issue #21: 512 ranks, a few broken; the verdict fits on a screen."""

    def test_512_ranks_with_a_few_problems_print_under_20_lines_naming_each(self):
        write_many(self.root, 512)
        # rank 17: its ET lost a step; rank 300: a leftover .partial;
        # rank 411: no device trace; rank 500: a damaged device trace.
        write_capture(self.root, [RankCapture(17, 512, steps=(3, 4, 5), gpu=True)],
                      et_text={17: RankCapture(17, 512, steps=(3, 4), gpu=True).et_text()})
        open(os.path.join(self.root, "0_kineto", "rank-300.json.partial"), "w").close()
        os.remove(os.path.join(self.root, "0_kineto", "rank-411.json"))
        cut_in_half(os.path.join(self.root, "0_kineto", "rank-500.json"))
        r = check(self.root)
        self.assertEqual(r.returncode, 1, r.stdout)
        lines = r.stdout.splitlines()
        self.assertLess(len(lines), 20, r.stdout)
        self.assertTrue(lines[0].startswith("chakrashim check: 512 ranks, "), lines[0])
        self.assertIn("508 ranks ok (0-16,18-299,301-410,412-499,501-511): steps 3-5 in both files", r.stdout)
        for rank in (17, 300, 411, 500):
            self.assertRegex(r.stdout, r"(?m)^rank %d: error \[" % rank)
        # --verbose: a line per rank, as small captures print.
        v = check("--verbose", self.root)
        self.assertGreater(len(v.stdout.splitlines()), 512)
        self.assertIn("rank 42: ok; steps 3-5 in both files", v.stdout)


class Windows(CheckCase):
    """A trace root of repeated or triggered windows (docs/on-demand.md):
    TRACE_DIR/step-S/, each a capture of its own, checked one by one."""

    def window(self, first, ranks=2, drop=None):
        root = os.path.join(self.root, "step-%d" % first)
        caps = [RankCapture(r, ranks, steps=(first, first + 1)) for r in range(ranks) if r != drop]
        write_capture(root, caps)
        return root

    def test_each_window_is_checked_in_step_order(self):
        for first in (12, 2, 7):
            self.window(first)
        r = check(self.root)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        headers = [l for l in r.stdout.splitlines() if l.endswith(":") and "/step-" in l]
        self.assertEqual([os.path.basename(h[:-1]) for h in headers], ["step-2", "step-7", "step-12"])
        self.assertIn("rank 0: ok; steps 7-8 in both files", r.stdout)
        self.assertEqual(r.stdout.count("2 ranks, 0 errors"), 3)
        self.assertTrue(r.stdout.rstrip().endswith("chakrashim check: 3 windows, 0 fail"), r.stdout)

    def test_a_window_that_lacks_a_rank_fails_the_check_and_is_named(self):
        self.window(2)
        lacking = self.window(7, drop=1)
        r = check(self.root)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        after = r.stdout.split(lacking + ":\n", 1)[1]
        self.assertIn("rank 1: error [ranks.missing] rank 1 of world size 2 has no files", after)
        self.assertIn("chakrashim check: 2 windows, 1 fails", r.stdout)

    def test_json_has_one_document_per_window(self):
        self.window(2)
        self.window(7, drop=0)
        r = check("--json", self.root)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        doc = json.loads(r.stdout)
        self.assertEqual(list(doc["windows"]), ["step-2", "step-7"])
        self.assertEqual(doc["windows"]["step-2"]["status"], 0)
        self.assertEqual(doc["windows"]["step-7"]["status"], 1)

    def test_a_root_with_a_capture_of_its_own_is_checked_as_before(self):
        write_capture(self.root, [RankCapture(0, 1)])
        self.window(7, ranks=1)
        r = check(self.root)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertNotIn("windows", r.stdout)
        self.assertIn("steps 3-4 in both files", r.stdout)

    def test_other_folders_one_level_down_are_named_not_checked(self):
        write_capture(os.path.join(self.root, "run-a"), [RankCapture(0, 1)])
        self.window(7, ranks=1)
        r = check(self.root)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("captures one level down", r.stdout)


if __name__ == "__main__":
    unittest.main()
