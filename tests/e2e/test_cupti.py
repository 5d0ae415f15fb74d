"""The GPU half of a capture, proved without a GPU (issue: GPU activity,
acceptance 2 and 3; never harm the job, the device side): a real CPU
training job runs under the shim with CHAKRA_CUPTI_LIB naming the libcupti
test double (tests/cupti_double), which emits a runtime launch and a kernel
or memcpy for each leaf op whose external id we pushed. The real libcupti,
which has no GPU here, shows the failure path."""
import glob
import json
import os
import resource
import unittest

from e2e_case import CaptureCase
from harness import JOBS, PYTHON, Capture, all_files, job_env, run, run_check, run_job

FAKE = os.environ.get("CHAKRASHIM_TEST_FAKE_CUPTI", "")
FAKE_CUDA = os.environ.get("CHAKRASHIM_TEST_FAKE_CUDA", "")
REAL = os.environ.get("CHAKRASHIM_TEST_CUPTI13_LIB", "")
GPU_CATS = ("kernel", "gpu_memcpy", "gpu_memset")
LAUNCH_CATS = ("cuda_runtime", "cuda_driver")
OUR_KIND = 5  # CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2


def stats(path_glob):
    out = {}
    for p in glob.glob(path_glob):
        with open(p) as f:
            s = json.load(f)
        out[s["pid"]] = s
    return out


@unittest.skipUnless(FAKE, "the libcupti test double was not built")
class GpuPathWithTheDouble(CaptureCase):
    def run_fake(self, script="plain_loop.py", args=(12,), **settings):
        self.stats_glob = os.path.join(os.path.dirname(self.trace_dir), "fake-%p.json")
        env = dict(CHAKRA_START_STEP=2, CHAKRA_END_STEP=4, CHAKRA_CUPTI_LIB=FAKE,
                   FAKE_CUPTI_STATS=self.stats_glob)
        env.update(settings)
        r = run_job(script, args, job_env(self.trace_dir, **{k: str(v) for k, v in env.items()}))
        return r

    def gpu_facts(self, cap):
        ev = cap.events
        ops = [e for e in ev if e.get("cat") in ("cpu_op", "user_annotation") and e.get("ph") == "X"]
        launches = [e for e in ev if e.get("cat") in LAUNCH_CATS]
        gpu = [e for e in ev if e.get("cat") in GPU_CATS]
        return ops, launches, gpu

    def test_kernels_and_memcpys_are_linked_to_their_launches_and_ops(self):
        r = self.run_fake()
        self.assert_ran(r)
        cap = self.assert_valid_capture([2, 3, 4])
        ops, launches, gpu = self.gpu_facts(cap)
        self.assertGreater(len(launches), 20)
        self.assertEqual(len(gpu), len(launches))
        cats = {e["cat"] for e in gpu}
        self.assertEqual(cats, {"kernel", "gpu_memcpy"})
        self.assertEqual({e["name"] for e in launches}, {"cudaLaunchKernel", "cudaMemcpyAsync"},
                         "launch names without CUPTI's _vNNNN")
        kernel = next(e for e in gpu if e["cat"] == "kernel")
        self.assertEqual(kernel["name"], "fake_gemm(float const*, float const*, float*, int)")
        by_corr = {e["args"]["correlation"]: e for e in launches}
        self.assertEqual(len(by_corr), len(launches), "duplicate launch correlation")
        op_by_ext = {e["args"]["External id"]: e for e in ops}
        for g in gpu:
            launch = by_corr[g["args"]["correlation"]]
            self.assertEqual(g["args"]["External id"], launch["args"]["External id"])
            self.assertGreaterEqual(g["ts"], launch["ts"])
            self.assertEqual(g["tid"], 7)
            self.assertEqual(g["args"]["stream"], 7)
        for l in launches:
            op = op_by_ext[l["args"]["External id"]]
            self.assertEqual((l["pid"], l["tid"]), (op["pid"], op["tid"]))
            self.assertGreater(l["ts"], op["ts"], "the launch starts strictly after its op")
            self.assertLessEqual(l["ts"] + l["dur"], op["ts"] + op["dur"] + 0.001)
            self.assertNotIn("stream", l["args"])
        steps = [(e["ts"], e["ts"] + e["dur"]) for e in cap.step_events()]
        for l in launches:
            self.assertTrue(any(a <= l["ts"] <= b for a, b in steps), "a launch outside the steps")
        flows = [e for e in cap.events if e.get("cat") == "ac2g"]
        self.assertEqual(sorted(e["ph"] for e in flows), ["f"] * len(gpu) + ["s"] * len(gpu))
        dt = cap.meta["device_trace"]
        self.assertEqual(dt["cupti"], "ok")
        self.assertEqual(dt["dropped_records"], 0)
        self.assertEqual(dt["clock"], "realtime")
        self.assertIn("GPU records", r.stderr)
        # What we asked of CUPTI: our own kind only, balanced, all off at the end.
        st = stats(self.stats_glob.replace("%p", "*"))
        self.assertEqual(len(st), 1, st)
        s = next(iter(st.values()))
        self.assertEqual(s["push_kinds"], [OUR_KIND])
        self.assertEqual(s["pushes"], s["pops"])
        self.assertEqual(s["unbalanced_pops"], 0)
        self.assertEqual(s["enabled_at_exit"], [])
        self.assertGreaterEqual(s["flushes"], 1)
        # The double emitted for warmup-free steps 2..4 only (it records
        # while enabled, from arm): the window join kept exactly those.
        self.assertEqual(len(launches), s["api_records"], "the double's records of steps 2..4")
        self.assertEqual(cap.meta["device_trace"]["unattributed_gpu_ops"], 0)

    def test_check_reads_the_gpu_side(self):
        self.assert_ran(self.run_fake())
        checked = run_check([self.trace_dir], "--json")
        self.assertEqual(checked.returncode, 0, checked.stdout + checked.stderr)
        report = json.loads(checked.stdout)
        text = json.dumps(report)
        self.assertNotIn("link.host_only", text, "a GPU capture is not host-only")

    def test_warmup_steps_keep_no_gpu_records(self):
        r = self.run_fake(CHAKRA_START_STEP=2, CHAKRA_END_STEP=5, CHAKRA_WARMUP_STEPS=1,
                          CHAKRA_ACTIVE_STEPS=1)
        self.assert_ran(r)
        cap = self.assert_valid_capture([3, 5])
        ops, launches, gpu = self.gpu_facts(cap)
        steps = [(e["ts"], e["ts"] + e["dur"]) for e in cap.step_events()]
        self.assertTrue(launches)
        for l in launches:
            self.assertTrue(any(a <= l["ts"] <= b for a, b in steps))
        s = next(iter(stats(self.stats_glob.replace("%p", "*")).values()))
        # Ops of warmup steps push no external id, so the double launched
        # nothing for them (real CUPTI would record their launches, which the
        # window join drops by time: unit test JoinDeviceCapture).
        self.assertEqual(s["api_records"], len(launches))

    def test_launches_on_a_user_thread_carry_that_threads_id(self):
        r = self.run_fake("threads.py", (8,))
        self.assert_ran(r)
        cap = Capture(self.trace_dir)
        ops, launches, gpu = self.gpu_facts(cap)
        op_by_ext = {e["args"]["External id"]: e for e in ops}
        tids = {l["tid"] for l in launches}
        self.assertGreaterEqual(len(tids), 2, "launches from two threads")
        for l in launches:
            self.assertEqual(l["tid"], op_by_ext[l["args"]["External id"]]["tid"])
        self.assert_check_passes()

    def test_a_calibrated_clock_still_puts_launches_inside_their_ops(self):
        r = self.run_fake(FAKE_CUPTI_CLOCK_OFFSET_NS=-3000000000)
        self.assert_ran(r)
        cap = self.assert_valid_capture([2, 3, 4])
        self.assertEqual(cap.meta["device_trace"]["clock"], "calibrated")
        ops, launches, gpu = self.gpu_facts(cap)
        op_by_ext = {e["args"]["External id"]: e for e in ops}
        for l in launches:
            op = op_by_ext[l["args"]["External id"]]
            self.assertGreater(l["ts"], op["ts"])
            self.assertLessEqual(l["ts"] + l["dur"], op["ts"] + op["dur"] + 0.001)

    def test_the_buffer_cap_drops_and_counts_and_memory_stays_bounded(self):
        # 2000 launches + kernels per leaf op (about 560 KB of records) into
        # two 64 KiB buffers: CUPTI (the double) finds no free buffer for
        # most of them.
        # Under a sanitizer 800 (about 220 KB of records an op, still
        # more than the two buffers hold): decoding the full flood under TSan
        # took 48 s of CPU (issue #53).
        per_op = 800 if os.environ.get("CHAKRASHIM_TEST_SANITIZE") else 2000
        flood = dict(CHAKRA_CUPTI_BUFFERS="128K", CHAKRA_MAX_MEMORY="8M",
                     FAKE_CUPTI_KERNELS_PER_OP=per_op, FAKE_CUPTI_MEMCPY_EVERY=0)
        r, peak = self.run_measured(**flood)
        self.assert_ran(r)
        # The decoded records share CHAKRA_MAX_MEMORY with the spans: the
        # flood may fill it and cut the window (memory_cap) before step 4.
        cap = Capture(self.trace_dir)
        self.assertIn(cap.meta["steps"]["reason"], ("end_step", "memory_cap"))
        # The partial step, if the cap made one, may have its marker too,
        # closed where the window was cut (issue #49), if it had begun.
        partial = cap.meta["steps"]["partial_last_step"]
        captured = cap.meta["steps"]["captured"]
        self.assertIn(cap.et_steps(), (captured, captured + ([partial] if partial is not None else [])))
        self.assert_check_passes()
        dropped = cap.meta["device_trace"]["dropped_records"]
        s = next(iter(stats(self.stats_glob.replace("%p", "*")).values()))
        self.assertGreater(s["dropped"], 0)
        # Ours adds the decoded records beyond CHAKRA_MAX_MEMORY to CUPTI's
        # count, so it is at least what the library dropped; the library's
        # last drops (no buffer ever completed after them) must be in it too.
        self.assertGreaterEqual(dropped, s["dropped"], "every record the library dropped is counted")
        self.assertIn("dropped", r.stderr)
        checked = run_check([self.trace_dir])
        self.assertIn("device.dropped", checked.stdout)
        # The same job and flood without the device trace: what the GPU side
        # costs stays within its caps (buffers + events) plus a constant.
        # Not under a sanitizer: its shadow memory is in the peak, so the
        # bound is not judged there, and the second job would be run for
        # nothing (issue #53).
        if os.environ.get("CHAKRASHIM_TEST_SANITIZE"):
            return
        self.trace_dir += "-off"
        r_off, peak_off = self.run_measured(CHAKRA_DEVICE_TRACE=0, **flood)
        self.assert_ran(r_off)
        grew_mib = (peak - peak_off) / 1024
        print(f"peak RSS: device trace off {peak_off / 1024:.1f} MiB, on {peak / 1024:.1f} MiB "
              f"(+{grew_mib:.1f} MiB; caps 0.125 + 8 MiB)")
        self.assertLess(grew_mib, 0.125 + 8 + 24)

    def run_measured(self, **settings):
        """Runs plain_loop.py under the double through a small parent that
        reports the job's peak RSS (KiB)."""
        self.stats_glob = os.path.join(os.path.dirname(self.trace_dir), "fake-%p.json")
        env = dict(CHAKRA_START_STEP=2, CHAKRA_END_STEP=4, CHAKRA_CUPTI_LIB=FAKE,
                   FAKE_CUPTI_STATS=self.stats_glob)
        env.update(settings)
        driver = ("import resource, subprocess, sys; p = subprocess.run(sys.argv[1:]); "
                  "print('PEAK', resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss); "
                  "sys.exit(p.returncode)")
        r = run([PYTHON, "-c", driver, PYTHON, os.path.join(JOBS, "plain_loop.py"), "8"],
                job_env(self.trace_dir, **{k: str(v) for k, v in env.items()}), timeout=300)
        peak = int(r.stdout.rsplit("PEAK", 1)[1].split()[0]) if "PEAK" in r.stdout else 0
        return r, peak

    def test_the_event_cap_cuts_and_says_where(self):
        r = self.run_fake(CHAKRA_MAX_MEMORY="4M", FAKE_CUPTI_KERNELS_PER_OP=1000,
                          FAKE_CUPTI_MEMCPY_EVERY=0, CHAKRA_CUPTI_BUFFERS="256M")
        self.assert_ran(r)
        cap = Capture(self.trace_dir)
        dt = cap.meta["device_trace"]
        ops, launches, gpu = self.gpu_facts(cap)
        self.assertGreater(dt["dropped_records"], 0)
        self.assertIsNotNone(dt["truncated_at"])
        self.assertLessEqual(len(launches) + len(gpu), (4 << 20) // 96 + 1)

    def test_spans_and_gpu_records_share_one_memory_budget(self):
        # Never harm the job, part two, item 9: GPU records that fill
        # CHAKRA_MAX_MEMORY cut the window as spans do (each side used to get
        # the whole cap, and correlation records none).
        # Reached by construction, however fast the records are drained: the
        # window's 7 steps make about 90k launches (about 13k a step: the
        # double's stats), 208 bytes each once decoded (two 96-byte events
        # and a 16-byte correlation link), about 19 MB against a cap of 3
        # MiB; one 8 MiB buffer (30k launches of 280 raw bytes) is enough.
        # The decode thread may take them in mid-window (the cut comes at
        # the stepping thread's next op) or only in stop's flush (the next
        # test): the verdict is memory_cap either way (issue #39).
        r = self.run_fake(CHAKRA_END_STEP=8, CHAKRA_MAX_MEMORY="3M", FAKE_CUPTI_KERNELS_PER_OP=300,
                          FAKE_CUPTI_MEMCPY_EVERY=0, CHAKRA_CUPTI_BUFFERS="64M")
        self.assert_ran(r)
        cap = Capture(self.trace_dir)
        steps = cap.meta["steps"]
        self.assertEqual(steps["reason"], "memory_cap", r.stderr)
        self.assertTrue(steps["cut_short"])
        self.assertIsNotNone(cap.meta["device_trace"]["truncated_at"])
        self.assertIn("CHAKRA_MAX_MEMORY", r.stderr)
        self.assert_check_passes()

    def test_gpu_records_that_fill_the_budget_only_in_the_last_flush_cut_the_window(self):
        # CUPTI completes a buffer only when it is full: the records of a
        # short window all reach the decoder in stop's flush, after the last
        # step boundary, as a slow decode thread's would. Steps 2..4 make
        # about 13k launches (about 50 leaf ops a step, 100 each): 3.6 MB of
        # raw records, less than one 8 MiB buffer, so none completes in the
        # window (asserted below); decoded, 2.7 MB, over a cap of 1 MiB. The
        # window used to say end_step, not cut short, with no line, while
        # its GPU records were cut (truncated_at, dropped records).
        r = self.run_fake(CHAKRA_END_STEP=4, CHAKRA_MAX_MEMORY="1M", FAKE_CUPTI_KERNELS_PER_OP=100,
                          FAKE_CUPTI_MEMCPY_EVERY=0, CHAKRA_CUPTI_BUFFERS="64M")
        self.assert_ran(r)
        s = next(iter(stats(self.stats_glob.replace("%p", "*")).values()))
        self.assertEqual(s["worker_deliveries"], 0, "a buffer completed in the window: no longer the last flush's")
        self.assertGreater(s["launches"], 10000)
        cap = Capture(self.trace_dir)
        steps = cap.meta["steps"]
        self.assertEqual(steps["reason"], "memory_cap", r.stderr)
        self.assertTrue(steps["cut_short"])
        self.assertEqual(steps["captured"], [2, 3, 4], "the host side kept every step")
        self.assertIsNotNone(cap.meta["device_trace"]["truncated_at"])
        self.assertGreater(cap.meta["device_trace"]["dropped_records"], 0)
        lines = [l for l in r.stderr.splitlines() if "CHAKRA_MAX_MEMORY" in l]
        self.assertEqual(len(lines), 1, r.stderr)
        self.assert_check_passes()

    def test_cupti_refused_gives_one_line_and_a_host_trace(self):
        r = self.run_fake(FAKE_CUPTI_REFUSE=1)
        self.assert_ran(r)
        cap = self.assert_valid_capture([2, 3, 4])
        self.assertEqual(cap.meta["device_trace"]["cupti"], "refused")
        self.assertFalse([e for e in cap.events if e.get("cat") in GPU_CATS + LAUNCH_CATS])
        lines = [l for l in r.stderr.splitlines() if "CUPTI refused activity" in l]
        self.assertEqual(len(lines), 1, r.stderr)
        s = next(iter(stats(self.stats_glob.replace("%p", "*")).values()))
        self.assertEqual(s["enabled_at_exit"], [])
        self.assertEqual(s["pushes"], 0)

    def test_the_jobs_own_torch_profiler_keeps_cupti(self):
        r = self.run_fake("profiled.py", (8,))
        self.assert_ran(r)
        self.assertIn("profiler saw True", r.stdout)
        cap = self.assert_valid_capture([2, 3, 4])
        self.assertEqual(cap.meta["device_trace"]["cupti"], "profiler_active")
        self.assertIn("torch.profiler is running", r.stderr)
        self.assertEqual(stats(self.stats_glob.replace("%p", "*")), {}, "we never called CUPTI")

    def test_a_torch_profiler_started_in_the_window_gets_cupti_to_itself(self):
        # Never harm the job, part two, item 10: the profiler starts at step 3
        # of the window 2..8 and stops at step 5. From its start, chakrashim
        # touches CUPTI no more (no disable, no flush under it); once it
        # stopped, the kinds we enabled are switched off.
        r = self.run_fake("profiled.py", (12, 3, 5), CHAKRA_END_STEP=8)
        self.assert_ran(r)
        cap = self.assert_valid_capture(list(range(2, 9)))
        self.assertEqual(cap.meta["device_trace"]["cupti"], "profiler_active")
        self.assertFalse([e for e in cap.events if e.get("cat") in GPU_CATS + LAUNCH_CATS])
        lines = [l for l in r.stderr.splitlines() if "started torch.profiler in the capture window" in l]
        self.assertEqual(len(lines), 1, r.stderr)
        s = next(iter(stats(self.stats_glob.replace("%p", "*")).values()))
        self.assertGreater(s["enables"], 0)
        self.assertEqual(s["flushes"], 0, "no flush under the profiler")
        self.assertEqual(s["enabled_at_exit"], [], "our kinds are off once the profiler stopped")

    def test_a_torch_profiler_started_in_the_window_then_a_signal_or_the_cap_ends_it(self):
        # Item 10 on the other ways a window ends: the profiler starts at
        # step 3 of the window 2..8, and before step 3's first op, so
        # before any step boundary could notice the profiler, the job gets
        # SIGTERM (its handler stops the profiler and exits 7), or runs
        # 10000 ops that reach CHAKRA_MAX_MEMORY (about 5700 do). Our stop
        # used to disable every kind and flush under the profiler. (An
        # exit with the profiler still running crashes torch itself.)
        for then, rc, reason, settings, still_on in (
                ("sigterm", 7, "signal:SIGTERM", {}, True),
                ("burst", 0, "memory_cap", dict(CHAKRA_MAX_MEMORY="2M"), False)):
            with self.subTest(then=then):
                self.trace_dir = os.path.join(os.path.dirname(self.trace_dir), "traces-" + then)
                for p in glob.glob(os.path.join(os.path.dirname(self.trace_dir), "fake-*.json")):
                    os.unlink(p)
                r = self.run_fake("profiled.py", (12, 3, 5, then), CHAKRA_END_STEP=8, **settings)
                self.assert_ran(r, rc)
                if then == "sigterm":
                    self.assertIn("job got SIGTERM", r.stdout)
                cap = Capture(self.trace_dir)
                self.assertEqual(cap.meta["steps"]["reason"], reason)
                self.assertEqual(cap.meta["steps"]["captured"], [2])
                self.assertEqual(cap.meta["device_trace"]["cupti"], "profiler_active")
                self.assertFalse([e for e in cap.events if e.get("cat") in GPU_CATS + LAUNCH_CATS])
                lines = [l for l in r.stderr.splitlines()
                         if "started torch.profiler in the capture window" in l]
                self.assertEqual(len(lines), 1, r.stderr)
                s = next(iter(stats(self.stats_glob.replace("%p", "*")).values()))
                self.assertGreater(s["enables"], 0)
                self.assertEqual(s["flushes"], 0, "no flush under the profiler")
                if still_on:
                    # The job ended with no step boundary after its
                    # profiler stopped: nothing of ours disabled the kinds.
                    self.assertNotEqual(s["enabled_at_exit"], [], "a disable under the profiler")
                else:
                    self.assertEqual(s["enabled_at_exit"], [], "our kinds are off once it stopped")
                self.assert_check_passes()

    @unittest.skipIf("thread" in os.environ.get("CHAKRASHIM_TEST_SANITIZE", ""),
                     "TSan does not support threads after fork")
    def test_children_never_enable_cupti(self):
        for mode in ("spawn_loader", "subprocess", "fork_pool"):
            with self.subTest(mode=mode):
                self.trace_dir = os.path.join(self.trace_dir + "-" + mode)
                r = self.run_fake("children.py", (mode,), CHAKRA_END_STEP=5)
                self.assert_ran(r)
                self.assertEqual(all_files(self.trace_dir), ["0_chakra/rank-0.json", "0_kineto/rank-0.json"])
                self.assert_valid_capture([2, 3, 4, 5])
                st = stats(self.stats_glob.replace("%p", "*"))
                parent = [s for s in st.values() if s["enables"] > 0]
                self.assertEqual(len(parent), 1, st)
                for pid, s in st.items():
                    if s is not parent[0]:
                        self.assertEqual((s["enables"], s["pushes"]), (0, 0), f"child {pid}: {s}")
                for p in glob.glob(self.stats_glob.replace("%p", "*")):
                    os.unlink(p)


@unittest.skipUnless(FAKE, "the libcupti test double was not built")
class SignalsWithTheDouble(CaptureCase):
    """SIGTERM and the flush signal in mid-window finalize the GPU side too
    (issue: never harm the job, the device side)."""

    def run_until(self, sig, blocked=False):
        import signal as _signal
        import subprocess
        args = ["400"] + (["--block"] if blocked else [])
        proc = subprocess.Popen([PYTHON, "-u", os.path.join(JOBS, "signal_target.py"), *args],
                                env=job_env(self.trace_dir, CHAKRA_START_STEP="2", CHAKRA_END_STEP="500",
                                            CHAKRA_CUPTI_LIB=FAKE, CHAKRA_FLUSH_SIGNAL="USR1"),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.addCleanup(lambda: proc.poll() is None and proc.kill())
        for line in proc.stdout:
            if line.strip() == "step 5":
                break
        proc.send_signal(sig)
        if sig == _signal.SIGUSR1:
            # The window is written and the job goes on: wait for the files.
            # Up to 300 s, a hang guard: the writer of a window that ends
            # while the job trains on runs at the lowest priority, which two
            # suites on 2 cores starve for long (20 s here was a verdict on
            # timing, issue #39).
            import time
            for _ in range(3000):
                if os.path.exists(os.path.join(self.trace_dir, "0_kineto", "rank-0.json")):
                    break
                time.sleep(0.1)
            proc.kill()
        out, err = proc.communicate(timeout=120)
        return proc.returncode, err

    def assert_gpu_side(self, reason):
        cap = Capture(self.trace_dir)
        self.assertEqual(cap.meta["steps"]["reason"], reason)
        self.assertEqual(cap.meta["device_trace"]["cupti"], "ok")
        launches = [e for e in cap.events if e.get("cat") in LAUNCH_CATS]
        gpu = [e for e in cap.events if e.get("cat") in GPU_CATS]
        self.assertTrue(launches)
        self.assertEqual(len(gpu), len(launches))
        self.assert_check_passes()

    def test_sigterm_writes_the_gpu_records_then_the_job_dies_of_it(self):
        import signal as _signal
        rc, err = self.run_until(_signal.SIGTERM)
        self.assertEqual(rc, -_signal.SIGTERM, err)
        self.assert_gpu_side("signal:SIGTERM")

    def test_the_flush_signal_writes_the_gpu_records(self):
        import signal as _signal
        rc, err = self.run_until(_signal.SIGUSR1)
        self.assert_gpu_side("signal:SIGUSR1")


@unittest.skipUnless(FAKE and FAKE_CUDA, "the libcupti and libcuda test doubles were not built")
class BoundedDeviceSync(CaptureCase):
    """Never harm the job, part two, item 6: the device sync before CUPTI's
    flush is bounded by CHAKRA_EXIT_TIMEOUT. A rank stuck in a collective
    (here: a libcuda double whose cuCtxSynchronize never returns) still
    finalizes its files and dies of its SIGTERM."""

    def env(self, **settings):
        from harness import PRELOAD
        env = job_env(self.trace_dir, CHAKRA_START_STEP="2", CHAKRA_CUPTI_LIB=FAKE,
                      CHAKRA_EXIT_TIMEOUT="3", **settings)
        # The libcuda double first, so that the collector finds "libcuda.so.1".
        env["LD_PRELOAD"] = env["LD_PRELOAD"].replace(PRELOAD, FAKE_CUDA + ":" + PRELOAD)
        return env

    def test_sigterm_with_a_hung_device_ends_the_job_within_the_bound(self):
        import signal as _signal
        import subprocess
        import time
        proc = subprocess.Popen([PYTHON, "-u", os.path.join(JOBS, "signal_target.py"), "400"],
                                env=self.env(CHAKRA_END_STEP="500", FAKE_CUDA_SYNC="hang"),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.addCleanup(lambda: proc.poll() is None and proc.kill())
        for line in proc.stdout:
            if line.strip() == "step 5":
                break
        t0 = time.monotonic()
        proc.send_signal(_signal.SIGTERM)
        try:
            _, err = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            self.fail("the job outlived its SIGTERM by 60 s: the device sync is not bounded")
        self.assertEqual(proc.returncode, -_signal.SIGTERM, err)
        self.assertLess(time.monotonic() - t0, 3 + 10)
        cap = Capture(self.trace_dir)
        self.assertEqual(cap.meta["device_trace"]["device_sync"], "timed_out")
        self.assertEqual(cap.meta["steps"]["reason"], "signal:SIGTERM")
        self.assert_check_passes()

    def test_a_hung_device_at_the_windows_end_delays_the_job_by_the_bound_only(self):
        r = run_job("plain_loop.py", (8,), self.env(CHAKRA_END_STEP="4", FAKE_CUDA_SYNC="hang"))
        self.assert_ran(r)
        cap = self.assert_valid_capture([2, 3, 4])
        self.assertEqual(cap.meta["device_trace"]["device_sync"], "timed_out")
        self.assertEqual(cap.dev["deviceProperties"], [], "the driver is not asked again")

    def test_a_device_that_syncs_gives_device_properties(self):
        r = run_job("plain_loop.py", (8,), self.env(CHAKRA_END_STEP="4"))
        self.assert_ran(r)
        cap = self.assert_valid_capture([2, 3, 4])
        self.assertEqual(cap.meta["device_trace"]["device_sync"], "ok")
        self.assertEqual(cap.dev["deviceProperties"][0]["name"], "Fake GPU 0")


@unittest.skipUnless(REAL, "no CUDA 13 libcupti")
class RealLibcuptiWithoutAGpu(CaptureCase):
    def test_one_line_and_a_host_trace(self):
        r = run_job("plain_loop.py", (8,), job_env(self.trace_dir, CHAKRA_START_STEP="2",
                                                    CHAKRA_END_STEP="4", CHAKRA_CUPTI_LIB=REAL))
        self.assert_ran(r)
        cap = self.assert_valid_capture([2, 3, 4])
        self.assertEqual(cap.meta["device_trace"]["cupti"], "failed")
        ours = [l for l in r.stderr.splitlines() if l.startswith("[chakrashim")]
        self.assertEqual(len(ours), 2, r.stderr)  # the CUPTI line and the summary


if __name__ == "__main__":
    unittest.main()
