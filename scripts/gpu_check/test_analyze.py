"""Unit tests of analyze.py on small synthetic runs: a good GPU run passes, and
each one-thing edit fails exactly its criterion. Run by CTest
(e2e.gpu_check_analyze), by `analyze.py --self-test` and by gpu-check.sh."""
import copy
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import analyze  # noqa: E402

WINDOW = (3, 5)
PID, TID, AUTOGRAD_TID = 100, 100, 101


def x(cat, name, ts, dur, pid=PID, tid=TID, **args):
    return {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur, "args": args}


def good_run():
    """(device trace, ET, torch.profiler trace) for steps 3..5: per step a GEMM
    from the stepping thread, a kernel on a second stream from another thread,
    an HtoD memcpy, and a memset."""
    events, nodes = [], [{"id": 1, "name": "[pytorch|profiler|execution_trace|process]",
                          "attrs": [{"name": "rf_id", "value": 0}]}]
    prof = []
    ext = rf = corr = 1
    for n in range(WINDOW[0], WINDOW[1] + 1):
        t0 = 1000.0 * n
        events.append(x("user_annotation", "ProfilerStep#%d" % n, t0, 1000.0, **{"External id": ext}))
        ext += 1
        ops = (("aten::mm", "cudaLaunchKernel", "kernel", "sm90_gemm_f32", TID, 7),
               ("aten::tanh", "cudaLaunchKernel", "kernel", "void tanh_kernel<float>()", AUTOGRAD_TID, 13),
               ("aten::copy_", "cudaMemcpyAsync", "gpu_memcpy", "Memcpy HtoD (Pinned -> Device)", TID, 7),
               ("aten::zero_", "cudaMemsetAsync", "gpu_memset", "Memset (Device)", TID, 7))
        for i, (op, api, cat, gpu_name, tid, stream) in enumerate(ops):
            ts = t0 + 100.0 + 200.0 * i
            events.append(x("cpu_op", op, ts, 50.0, tid=tid, **{"External id": ext, "Record function id": rf}))
            events.append(x("cuda_runtime", api, ts + 10.0, 5.5, tid=tid, **{
                "External id": ext, "correlation": corr, "cbid": 211}))
            gpu = x(cat, gpu_name, ts + 30.123, 10.0, pid=0, tid=stream, **{
                "External id": ext, "correlation": corr, "device": 0, "stream": stream})
            events.append(gpu)
            prof.append(copy.deepcopy(gpu))
            nodes.append({"id": len(nodes) + 1, "name": op, "attrs": [{"name": "rf_id", "value": rf}]})
            ext, rf, corr = ext + 1, rf + 1, corr + 1
    device = {"schemaVersion": 1, "traceEvents": events,
              "chakrashim": {"steps": {"captured": list(range(WINDOW[0], WINDOW[1] + 1))},
                             "device_trace": {"cupti": "ok", "dropped_records": 0, "clock": "realtime"}}}
    return device, {"nodes": nodes}, {"traceEvents": prof}


def check_doc(findings=()):
    findings = list(findings)
    return {"status": 1 if any(f["severity"] == "error" for f in findings) else 0,
            "errors": sum(f["severity"] == "error" for f in findings),
            "warnings": sum(f["severity"] == "warning" for f in findings),
            "reports": [{"rank": 0, "findings": findings, "figures": {}}]}


def times(before=10.0, inside=12.0, after=10.0, steps=12):
    return {"step_ms": [before] * 3 + [inside] * 3 + [before] + [after] * (steps - 7)}


class Run:
    """A run's files in a folder, edited before analyze() reads them."""

    def __init__(self, root, mode="gpu"):
        self.root = root
        self.device, self.et, self.prof = good_run()
        self.check = check_doc()
        self.shim_times, self.prof_times = times(), times(inside=20.0)
        self.mode = mode
        self.job = "eager"
        self.gzip_device = False

    def write(self):
        for sub in ("t_chakra", "t_kineto"):
            os.makedirs(os.path.join(self.root, "cap", sub), exist_ok=True)
        dev = os.path.join(self.root, "cap", "t_kineto", "rank-0.json")
        if self.gzip_device:
            with gzip.open(dev + ".gz", "wt") as f:
                json.dump(self.device, f)
        else:
            self._dump(dev, self.device)
        self._dump(os.path.join(self.root, "cap", "t_chakra", "rank-0.json"), self.et)
        self._dump(os.path.join(self.root, "check.json"), self.check)
        self._dump(os.path.join(self.root, "prof.json"), self.prof)
        self._dump(os.path.join(self.root, "shim_times.json"), self.shim_times)
        self._dump(os.path.join(self.root, "prof_times.json"), self.prof_times)

    def _dump(self, path, doc):
        if doc is not None:
            with open(path, "w") as f:
                json.dump(doc, f)

    def argv(self):
        p = lambda name: os.path.join(self.root, name)  # noqa: E731
        return ["--capture", p("cap"), "--check-json", p("check.json"), "--shim-times", p("shim_times.json"),
                "--profiler-trace", p("prof.json"), "--profiler-times", p("prof_times.json"),
                "--window", str(WINDOW[0]), str(WINDOW[1]), "--before", "0", "2", "--after", "7", "11",
                "--mode", self.mode, "--job", self.job]

    def analyze(self):
        self.write()
        fig, fails = analyze.analyze(analyze.parse_args(self.argv()))
        return fig, dict(fails)


class AnalyzeCase(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="gpu-check-analyze-")
        self.addCleanup(shutil.rmtree, self.dir, ignore_errors=True)
        self.run_ = Run(self.dir)

    def events(self, cat=None, name=None):
        return [e for e in self.run_.device["traceEvents"]
                if (cat is None or e.get("cat") == cat) and (name is None or e.get("name") == name)]

    def assert_fails_only(self, criterion):
        fig, fails = self.run_.analyze()
        self.assertEqual(sorted(fails), [criterion], fails)
        return fig, fails

    # --- the good run -------------------------------------------------------
    def test_a_good_gpu_run_passes_with_every_figure(self):
        fig, fails = self.run_.analyze()
        self.assertEqual(fails, {})
        self.assertEqual((fig["kernels"], fig["memcpys"], fig["memsets"]), (6, 3, 3))
        self.assertEqual((fig["ext_cov"], fig["rf_join"], fig["count_diff_max"]), (100.0, 100.0, 0.0))
        self.assertEqual((fig["dropped"], fig["launches_outside_step"], fig["gpu_before_launch"]), (0, 0, 0))
        self.assertEqual(fig["streams"], 2)
        self.assertEqual(fig["shim_ms"], [10.0, 12.0, 10.0])
        self.assertEqual(fig["profiler_ms"], [10.0, 20.0, 10.0])
        self.assertEqual(fig["ratio_after"], 1.0)
        line = analyze.summary_line(fig, [])
        self.assertTrue(line.startswith(
            "gpu-check: PASS kernels=6 memcpys=3 ext_cov=100.00% rf_join=100.00% dropped=0 "
            "launches_outside_step=0 gpu_before_launch=0 count_diff_max=0.00% step_ms before/inside/after "
            "shim=10.000/12.000/10.000 profiler=10.000/20.000/10.000 ratio_after=1.000 "), line)
        self.assertIn(" memsets=3 gpu_unlinked=0 streams=2 via_driver=0 via_graph=0 cupti=ok clock=realtime "
                      "mode=gpu job=eager", line)

    def test_a_gzip_device_trace_reads_the_same(self):
        self.run_.gzip_device = True
        fig, fails = self.run_.analyze()
        self.assertEqual(fails, {})
        self.assertEqual(fig["kernels"], 6)

    # --- one criterion each ---------------------------------------------------
    def test_a_kernel_without_external_id_fails_ext_cov(self):
        del self.events("kernel")[0]["args"]["External id"]
        fig, _ = self.assert_fails_only("ext_cov")
        self.assertAlmostEqual(fig["ext_cov"], 800 / 9)

    def test_an_external_id_that_is_not_the_launching_ops_fails_ext_cov(self):
        self.events("gpu_memcpy")[1]["args"]["External id"] = 999
        self.assert_fails_only("ext_cov")

    def test_a_launch_on_another_thread_than_its_op_fails_ext_cov(self):
        self.events("cuda_runtime", "cudaLaunchKernel")[0]["tid"] = 4242
        self.assert_fails_only("ext_cov")

    def test_dropped_records_fail(self):
        self.run_.device["chakrashim"]["device_trace"]["dropped_records"] = 3
        fig, _ = self.assert_fails_only("dropped")
        self.assertEqual(fig["dropped"], 3)

    def test_a_launch_outside_every_step_fails(self):
        launch = self.events("cuda_runtime")[-1]
        launch["ts"] = 6000.5  # after ProfilerStep#5 ends at 6000
        self.events("gpu_memset")[-1]["ts"] = 6010.0
        fig, _ = self.assert_fails_only("launches_outside_step")
        self.assertEqual(fig["launches_outside_step"], 1)

    def test_a_launch_that_ends_after_the_last_step_fails(self):
        launch = self.events("cuda_runtime")[-1]
        launch["dur"] = 5000.0
        self.assert_fails_only("launches_outside_step")

    def test_a_launch_across_two_adjacent_steps_is_inside(self):
        launch = self.events("cuda_runtime")[0]
        launch["ts"], launch["dur"] = 3990.0, 20.0
        self.events("kernel")[0]["ts"] = 4100.0
        fig, fails = self.run_.analyze()
        self.assertEqual(fails, {})

    def test_a_gpu_op_before_its_launch_fails(self):
        kernel = self.events("kernel")[2]
        launch = next(e for e in self.events("cuda_runtime")
                      if e["args"]["correlation"] == kernel["args"]["correlation"])
        kernel["ts"] = launch["ts"] - 0.001
        fig, _ = self.assert_fails_only("gpu_before_launch")
        self.assertEqual(fig["gpu_before_launch"], 1)

    def test_a_memset_without_its_launch_is_shown_not_judged(self):
        self.events("gpu_memset")[0]["args"]["correlation"] = 10 ** 6
        fig, fails = self.run_.analyze()
        self.assertEqual(fails, {})
        self.assertEqual(fig["gpu_unlinked"], 1)
        self.assertIn(" gpu_unlinked=1 ", analyze.summary_line(fig, []))

    def test_a_kernel_without_its_launch_fails_ext_cov(self):
        self.events("kernel")[0]["args"]["correlation"] = 10 ** 6
        fig, _ = self.assert_fails_only("ext_cov")
        self.assertEqual(fig["gpu_unlinked"], 1)

    def test_a_memset_before_its_launch_counts_too(self):
        memset = self.events("gpu_memset")[0]
        memset["ts"] = 0.0
        self.assert_fails_only("gpu_before_launch")

    def test_a_profiler_count_off_by_more_than_one_percent_fails(self):
        self.run_.prof["traceEvents"].append(dict(self.run_.prof["traceEvents"][0]))
        fig, fails = self.assert_fails_only("count_diff")
        self.assertAlmostEqual(fig["count_diff_max"], 25.0)
        self.assertIn("'sm90_gemm_f32' ours 3 torch 4", fails["count_diff"])

    def test_a_kernel_name_only_one_side_has_fails(self):
        for e in self.run_.prof["traceEvents"]:
            if e["name"] == "sm90_gemm_f32":
                e["name"] = "void gemm<float>(float*)"
        fig, _ = self.assert_fails_only("count_diff")
        self.assertEqual(fig["count_diff_max"], 100.0)

    def test_a_difference_within_one_percent_passes(self):
        kernel = self.run_.prof["traceEvents"][0]
        self.run_.prof["traceEvents"] += [dict(kernel) for _ in range(301)]
        self.run_.device["traceEvents"] += [dict(e) for e in self.events("kernel", kernel["name"])
                                            for _ in range(100)]
        fig, fails = self.run_.analyze()
        self.assertNotIn("count_diff", fails)
        self.assertAlmostEqual(fig["count_diff_max"], 100 * 1 / 304)

    def test_a_slower_step_after_the_window_fails(self):
        self.run_.shim_times = times(after=10.3)
        fig, fails = self.assert_fails_only("ratio_after")
        self.assertAlmostEqual(fig["ratio_after"], 1.03)

    def test_a_ratio_of_1_02_passes(self):
        self.run_.shim_times = times(after=10.2)
        _, fails = self.run_.analyze()
        self.assertEqual(fails, {})

    def test_et_nodes_missing_from_the_device_trace_fail_rf_join(self):
        nodes = self.run_.et["nodes"]
        nodes.append({"id": 99, "name": "aten::add", "attrs": [{"name": "rf_id", "value": 10 ** 6}]})
        nodes.append({"id": 98, "name": "## process_group:init ##", "attrs": [{"name": "rf_id", "value": 7}]})
        fig, _ = self.assert_fails_only("rf_join")
        self.assertEqual(fig["rf_join_counts"], [12, 13])

    def test_check_errors_fail(self):
        self.run_.check = check_doc([{"rule": "span.equal", "severity": "error", "detail": "x"}])
        _, fails = self.assert_fails_only("check")
        self.assertIn("span.equal", fails["check"])

    def test_a_host_only_warning_fails_on_gpu_and_passes_on_cpu(self):
        self.run_.check = check_doc([{"rule": "link.host_only", "severity": "warning", "detail": "x"}])
        self.assert_fails_only("check")
        self.run_.mode = "cpu"
        _, fails = self.run_.analyze()
        self.assertEqual(fails, {})

    def test_cupti_not_ok_fails(self):
        self.run_.device["chakrashim"]["device_trace"]["cupti"] = "absent"
        self.assert_fails_only("cupti")

    def test_one_stream_fails(self):
        for e in self.events():
            if e.get("cat") in analyze.GPU_CATS:
                e["tid"] = e["args"]["stream"] = 7
        self.assert_fails_only("streams")

    def test_a_window_with_other_steps_fails(self):
        self.run_.device["chakrashim"]["steps"]["captured"] = [3, 4]
        _, fails = self.assert_fails_only("window")
        self.assertIn("expected steps [3, 4, 5]", fails["window"])

    # --- the compiled job: Triton kernels through the driver API -------------
    def make_compiled(self):
        """aten::mm's kernel becomes a Triton kernel launched by cuLaunchKernel."""
        self.run_.job = "compiled"
        for e in self.events("cpu_op", "aten::mm"):
            e["name"] = "CompiledFunction"
        for e in self.events("cuda_runtime"):
            if e["tid"] == TID and e["name"] == "cudaLaunchKernel":
                e["name"] = "cuLaunchKernel"
        for e in self.events("kernel", "sm90_gemm_f32") + [
                e for e in self.run_.prof["traceEvents"] if e["name"] == "sm90_gemm_f32"]:
            e["name"] = "triton_poi_fused_mm_0"

    def test_a_compiled_run_with_linked_driver_launches_passes(self):
        self.make_compiled()
        fig, fails = self.run_.analyze()
        self.assertEqual(fails, {})
        self.assertEqual((fig["via_driver"], fig["via_driver_linked"]), (3, 3))
        self.assertIn(" via_driver=3 via_graph=0 ", analyze.summary_line(fig, []))
        self.assertTrue(analyze.summary_line(fig, []).endswith(" job=compiled"))

    def test_a_compiled_run_without_driver_launches_fails(self):
        self.run_.job = "compiled"
        _, fails = self.assert_fails_only("driver_launches")
        self.assertIn("no kernel launched through cuLaunchKernel/cuLaunchKernelEx", fails["driver_launches"])

    def test_a_driver_launched_kernel_without_its_external_id_fails(self):
        self.make_compiled()
        del self.events("kernel", "triton_poi_fused_mm_0")[1]["args"]["External id"]
        fig, fails = self.run_.analyze()
        self.assertEqual(sorted(fails), ["driver_launches", "ext_cov"], fails)
        self.assertIn("1 of 3 driver-launched kernels", fails["driver_launches"])
        self.assertIn("triton_poi_fused_mm_0", fails["driver_launches"])

    def test_the_eager_job_does_not_judge_driver_launches(self):
        self.make_compiled()
        self.run_.job = "eager"
        _, fails = self.run_.analyze()
        self.assertEqual(fails, {})

    # --- the graphs job: kernels of a replayed CUDA graph ------------------------
    def make_graphs(self, marker=True):
        """Per step, the GEMM and tanh kernels become one graph's: both carry
        the correlation and External id of one cudaGraphLaunch, made inside a
        train_step_graph annotation."""
        self.run_.job = "graphs"
        launches = self.events("cuda_runtime", "cudaLaunchKernel")
        kernels = self.events("kernel")
        for step in range(WINDOW[1] - WINDOW[0] + 1):
            gemm_launch, gemm, tanh = launches[2 * step], kernels[2 * step], kernels[2 * step + 1]
            gemm_launch["name"] = "cudaGraphLaunch"
            for k, node in ((gemm, 1), (tanh, 2)):
                k["args"].update({"correlation": gemm_launch["args"]["correlation"],
                                  "External id": gemm_launch["args"]["External id"],
                                  "graph id": 1, "graph node id": node})
            tanh["tid"] = tanh["args"]["stream"] = gemm["args"]["stream"]
            tanh["ts"] = gemm["ts"] + 20.0
            if marker:
                t0 = 1000.0 * (WINDOW[0] + step)
                self.run_.device["traceEvents"].append(x(
                    "user_annotation", analyze.GRAPH_STEP_MARKER, t0 + 90.0, 80.0,
                    **{"External id": 10 ** 5 + step}))

    def test_a_graphs_run_whose_kernels_link_to_the_replaying_op_passes(self):
        self.make_graphs()
        fig, fails = self.run_.analyze()
        self.assertEqual(fails, {})                 # one stream: not judged for graphs
        self.assertEqual((fig["via_graph"], fig["via_graph_linked"]), (6, 6))
        self.assertEqual(fig["graph_ops"], {"aten::mm": 6})
        self.assertIn(" via_driver=0 via_graph=6 ", analyze.summary_line(fig, []))

    def test_graph_kernels_whose_op_is_outside_the_replay_annotation_fail(self):
        self.make_graphs(marker=False)
        _, fails = self.assert_fails_only("graph_launches")
        self.assertIn("6 of 6 GPU ops of replayed graphs", fails["graph_launches"])

    def test_a_graph_kernel_with_another_correlation_fails(self):
        self.make_graphs()
        self.events("kernel")[1]["args"]["correlation"] = 10 ** 6
        fig, fails = self.run_.analyze()
        self.assertEqual(sorted(fails), ["ext_cov"], fails)   # no longer a graph kernel: unlinked
        self.assertEqual(fig["via_graph"], 5)

    def test_a_graphs_run_without_graph_launches_fails(self):
        self.run_.job = "graphs"
        _, fails = self.assert_fails_only("graph_launches")
        self.assertIn("cudaGraphLaunch", fails["graph_launches"])

    # --- missing inputs ------------------------------------------------------
    def test_a_missing_profiler_trace_fails_and_still_summarizes(self):
        self.run_.prof = None
        fig, fails = self.run_.analyze()
        self.assertEqual(sorted(fails), ["profiler"])
        self.assertIn("n/a", analyze.summary_line(fig, list(fails.items())).split("count_diff_max=")[1][:4])

    def test_a_missing_capture_fails_every_capture_figure_as_na(self):
        self.run_.write()
        shutil.rmtree(os.path.join(self.dir, "cap", "t_kineto"))
        fig, fails = analyze.analyze(analyze.parse_args(self.run_.argv()))
        self.assertIn("capture", dict(fails))
        self.assertIn("kernels=n/a", analyze.summary_line(fig, fails))

    def test_step_ranges_past_the_run_fail(self):
        self.run_.shim_times = {"step_ms": [1.0] * 8}
        self.assert_fails_only("step_times")

    # --- cpu mode (gpu-check.sh --dry) ---------------------------------------
    def test_a_host_only_cpu_run_passes_in_cpu_mode(self):
        self.run_.mode = "cpu"
        self.run_.device["traceEvents"] = [e for e in self.events() if e["cat"] in analyze.HOST_CATS]
        self.run_.device["chakrashim"]["device_trace"]["cupti"] = "absent"
        self.run_.prof = {"traceEvents": []}
        self.run_.shim_times = times(after=30.0)   # shown, not judged, on a CPU
        fig, fails = self.run_.analyze()
        self.assertEqual(fails, {})
        line = analyze.summary_line(fig, [])
        self.assertIn("gpu-check: PASS kernels=0 memcpys=0 ext_cov=n/a rf_join=100.00%", line)
        self.assertIn("ratio_after=3.000", line)
        self.assertTrue(line.endswith("mode=cpu job=eager"))

    # --- the command -----------------------------------------------------------
    def test_the_command_prints_the_summary_and_failures_and_writes_files(self):
        self.run_.device["chakrashim"]["device_trace"]["dropped_records"] = 2
        self.run_.write()
        summary, out_json = os.path.join(self.dir, "summary.txt"), os.path.join(self.dir, "analysis.json")
        r = subprocess.run([sys.executable, os.path.join(HERE, "analyze.py"), *self.run_.argv(),
                            "--summary-out", summary, "--json-out", out_json],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        lines = r.stdout.splitlines()
        self.assertTrue(lines[0].startswith("gpu-check: FAIL kernels=6 "), lines)
        self.assertEqual(lines[1], "gpu-check: FAIL [dropped] metadata dropped_records = 2 (need 0)")
        with open(summary) as f:
            self.assertEqual(f.read().splitlines(), lines)
        with open(out_json) as f:
            doc = json.load(f)
        self.assertFalse(doc["pass"])
        self.assertEqual(doc["failures"][0]["criterion"], "dropped")
        self.assertEqual(len(doc["count_rows"]), 3)  # kernels and memcpys by name

    def test_the_command_exits_0_on_pass_and_2_on_usage_errors(self):
        self.run_.write()
        cmd = [sys.executable, os.path.join(HERE, "analyze.py")]
        r = subprocess.run(cmd + self.run_.argv(), capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertTrue(r.stdout.startswith("gpu-check: PASS "))
        r = subprocess.run(cmd + ["--capture", self.dir], capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 2)
        self.assertIn("missing --check-json", r.stderr)


if __name__ == "__main__":
    unittest.main()
