#!/usr/bin/env python3
"""Judge one scripts/gpu-check.sh run from its files (standard library only).

  analyze.py --capture DIR --check-json FILE --shim-times FILE
             --profiler-trace FILE --profiler-times FILE
             --window S E --before A B --after C D [--mode gpu|cpu]
             [--job eager|compiled|graphs] [--json-out FILE] [--summary-out FILE]
  analyze.py --self-test

DIR is the chakrashim trace root of the run under the shim (one JOB_chakra/
and JOB_kineto/ pair, rank 0). FILE for --check-json is what
`chakrashim check DIR --json` printed. The step-time files are those of
examples/train_cuda.py --step-times; the profiler trace is the chrome trace
torch.profiler exported for the same steps S..E. Step ranges are inclusive.

Prints one summary line,

  gpu-check: PASS|FAIL kernels=.. memcpys=.. ext_cov=..% rf_join=..% dropped=..
  launches_outside_step=.. gpu_before_launch=.. count_diff_max=..% step_ms
  before/inside/after shim=a/b/c profiler=d/e/f ratio_after=.. (and a few
  more key=value figures)

then one line per failed criterion: `gpu-check: FAIL [name] what`.
Exit status 0 on PASS, 1 on FAIL, 2 on usage errors.

--job names the examples/train_cuda.py job judged (job=NAME ends the
summary line) and adds its own criteria in GPU mode: `compiled` needs
kernels launched through the driver API (cuLaunchKernel*, Inductor's Triton
kernels) and every one of them linked to its op; `graphs` needs kernels of a
replayed CUDA graph (their correlation is a cudaGraphLaunch's), every one
linked to the op that replayed it, inside the train_step_graph annotation.
The `streams` criterion (two streams) holds for eager and compiled only.

--mode cpu (gpu-check.sh --dry) judges a CPU run of the same pipeline: the
GPU-only criteria print n/a and the step-time ratio is shown, not judged.
"""
import argparse
import glob
import gzip
import json
import os
import statistics
import sys

# Chakra's chakra_trace_link counts these as launches (docs/trace-format.md).
LAUNCH_NAMES = frozenset((
    "cudaLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernel", "cuLaunchKernelEx",
    "cudaLaunchCooperativeKernel", "cudaMemcpy", "cudaMemcpyAsync",
    "cudaMemcpyFromSymbol", "cudaMemcpyToSymbol"))
# Triton's launcher (Inductor) calls the driver API directly.
DRIVER_LAUNCH_NAMES = frozenset(("cuLaunchKernel", "cuLaunchKernelEx"))
# CUPTI gives every kernel, memcpy and memset of a replayed graph the
# correlation id of the cudaGraphLaunch that launched the graph (plus a
# graphId and graphNodeId of its own), so they link through that launch.
GRAPH_LAUNCH_NAMES = frozenset(("cudaGraphLaunch", "cuGraphLaunch"))
GRAPH_STEP_MARKER = "train_step_graph"    # examples/train_cuda.py --job graphs
JOBS = ("eager", "compiled", "graphs")
GPU_CATS = ("kernel", "gpu_memcpy", "gpu_memset")
COUNTED_CATS = ("kernel", "gpu_memcpy")          # the ones Chakra links, and we compare
HOST_CATS = ("cpu_op", "user_annotation")
RUNTIME_CATS = ("cuda_runtime", "cuda_driver")
ET_STRUCTURAL_PREFIX = "[pytorch|profiler|execution_trace|"
ET_PROCESS_GROUP = "## process_group:init ##"
STEP_PREFIX = "ProfilerStep#"

EXT_COV_MIN = 99.0          # percent
RF_JOIN_MIN = 99.0          # percent
COUNT_DIFF_MAX = 1.0        # percent, per name
RATIO_AFTER_MAX = 1.02


class InputError(Exception):
    """A file the analysis needs is missing or unreadable."""


def load_json(path):
    """A JSON document from a plain or gzip file: 'x.json' or 'x.json.gz'."""
    if not path or not os.path.isfile(path):
        raise InputError("missing file %s" % path)
    try:
        with open(path, "rb") as f:
            gz = f.read(2) == b"\x1f\x8b"
        opener = gzip.open if gz else open
        with opener(path, "rt", encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError, EOFError) as e:
        raise InputError("unreadable %s: %s" % (path, e))


def ns(us):
    """Kineto microseconds (3 decimals, or a float) -> integer nanoseconds."""
    return int(round(float(us) * 1000.0))


def find_capture(root):
    """The rank-0 ET and device trace under a trace root (exactly one run)."""
    ets = sorted(glob.glob(os.path.join(root, "*_chakra*", "rank-0.json")))
    devs = sorted(glob.glob(os.path.join(root, "*_kineto*", "rank-0.json")) +
                  glob.glob(os.path.join(root, "*_kineto*", "rank-0.json.gz")))
    if len(ets) != 1 or len(devs) != 1:
        raise InputError("expected one rank-0 ET and one rank-0 device trace under %s, found %d and %d"
                         % (root, len(ets), len(devs)))
    return ets[0], devs[0]


def merge(intervals):
    out = []
    for start, end in sorted(intervals):
        if out and start <= out[-1][1]:
            out[-1][1] = max(out[-1][1], end)
        else:
            out.append([start, end])
    return out


def inside(intervals, start, end):
    return any(s <= start and end <= e for s, e in intervals)


def step_number(name):
    try:
        return int(name[len(STEP_PREFIX):])
    except ValueError:
        return None


def device_facts(doc):
    """Counts and joins over one Kineto-format device trace."""
    events = [e for e in doc.get("traceEvents", []) if isinstance(e, dict)]
    steps, step_numbers = [], []
    host_ext = {}           # (pid, tid, External id) -> (start, end, name) of every host op
    markers = []            # spans of the graph job's step annotation
    rf_ids = set()
    launches = {}           # correlation -> runtime event
    runtime = []
    gpu = []
    for e in events:
        cat, name, args = e.get("cat"), e.get("name", ""), e.get("args") or {}
        if e.get("ph") != "X":
            continue
        if cat in HOST_CATS:
            if name.startswith(STEP_PREFIX):
                steps.append((ns(e["ts"]), ns(e["ts"]) + ns(e.get("dur", 0))))
                step_numbers.append(step_number(name))
            start = ns(e["ts"])
            if "External id" in args:
                host_ext[(e.get("pid"), e.get("tid"), args["External id"])] = (
                    start, start + ns(e.get("dur", 0)), name)
            if name == GRAPH_STEP_MARKER:
                markers.append((start, start + ns(e.get("dur", 0))))
            if "Record function id" in args:
                rf_ids.add(args["Record function id"])
        elif cat in RUNTIME_CATS:
            runtime.append(e)
            if "correlation" in args:
                launches.setdefault(args["correlation"], e)
        elif cat in GPU_CATS:
            gpu.append(e)
    gpu_corr = {(e.get("args") or {}).get("correlation") for e in gpu}
    step_spans = merge(steps)
    f = {"kernels": 0, "memcpys": 0, "memsets": 0, "ext_present": 0, "ext_linked": 0,
         "gpu_unlinked": 0, "gpu_before_launch": 0, "launches": 0, "launches_outside_step": 0,
         "streams": 0, "via_driver": 0, "via_driver_linked": 0, "via_graph": 0,
         "via_graph_linked": 0, "graph_ops": {}, "steps": sorted(n for n in step_numbers if n is not None),
         "names": {}, "examples": {}}

    def example(key, text):
        f["examples"].setdefault(key, text)

    streams = set()
    for e in gpu:
        cat, args = e["cat"], e.get("args") or {}
        f[{"kernel": "kernels", "gpu_memcpy": "memcpys", "gpu_memset": "memsets"}[cat]] += 1
        streams.add((e.get("pid"), args.get("stream", e.get("tid"))))
        launch = launches.get(args.get("correlation"))
        if launch is None:
            f["gpu_unlinked"] += 1
            example("gpu_unlinked", "%s %r correlation %s" % (cat, e.get("name"), args.get("correlation")))
        elif ns(e["ts"]) < ns(launch["ts"]):
            f["gpu_before_launch"] += 1
            example("gpu_before_launch", "%s %r at %s before its launch %s at %s" % (
                cat, e.get("name"), e["ts"], launch.get("name"), launch["ts"]))
        if cat not in COUNTED_CATS:
            continue
        f["names"][e.get("name", "")] = f["names"].get(e.get("name", ""), 0) + 1
        ext = args.get("External id")
        if ext is not None:
            f["ext_present"] += 1
        # Linked as chakra_trace_link links it: the launch (by correlation)
        # has the same External id, and a host op with that id is on the
        # launch's thread.
        op = None
        if ext is not None and launch is not None and (launch.get("args") or {}).get("External id") == ext:
            op = host_ext.get((launch.get("pid"), launch.get("tid"), ext))
        if op is not None:
            f["ext_linked"] += 1
        else:
            example("ext_unlinked", "%s %r External id %s correlation %s" % (
                cat, e.get("name"), ext, args.get("correlation")))
        launch_name = launch.get("name") if launch is not None else None
        if launch_name in DRIVER_LAUNCH_NAMES:
            f["via_driver"] += 1
            f["via_driver_linked"] += op is not None
            if op is None:
                example("driver_unlinked", "%s %r launched by %s correlation %s, External id %s" % (
                    cat, e.get("name"), launch_name, args.get("correlation"), ext))
        elif launch_name in GRAPH_LAUNCH_NAMES:
            f["via_graph"] += 1
            # The op that replayed it: linked, and inside the step annotation
            # that wraps graph.replay().
            replayed = op is not None and any(s <= op[0] and op[1] <= e_ for s, e_ in markers)
            f["via_graph_linked"] += replayed
            if op is not None:
                f["graph_ops"][op[2]] = f["graph_ops"].get(op[2], 0) + 1
            if not replayed:
                example("graph_unlinked", "%s %r of graph %s node %s, launched by %s correlation %s, "
                        "External id %s, op %r" % (cat, e.get("name"), args.get("graph id"),
                                                  args.get("graph node id"), launch_name,
                                                  args.get("correlation"), ext, op and op[2]))
    f["streams"] = len(streams)
    for e in runtime:
        args = e.get("args") or {}
        if e.get("name") not in LAUNCH_NAMES and args.get("correlation") not in gpu_corr:
            continue
        f["launches"] += 1
        start = ns(e["ts"])
        if not inside(step_spans, start, start + ns(e.get("dur", 0))):
            f["launches_outside_step"] += 1
            example("launch_outside_step", "%s at %s (dur %s) on tid %s" % (
                e.get("name"), e["ts"], e.get("dur"), e.get("tid")))
    f["rf_ids"] = rf_ids
    meta = doc.get("chakrashim") or {}
    dev_meta = meta.get("device_trace") or {}
    f["cupti"] = dev_meta.get("cupti")
    f["dropped"] = dev_meta.get("dropped_records")
    f["clock"] = dev_meta.get("clock")
    f["captured"] = (meta.get("steps") or {}).get("captured")
    return f


def et_join(et_doc, rf_ids):
    """(matched, total) ET op nodes whose rf_id is a device Record function id."""
    total = matched = 0
    for node in et_doc.get("nodes", []):
        name = node.get("name", "")
        if name.startswith(ET_STRUCTURAL_PREFIX) or name == ET_PROCESS_GROUP:
            continue
        total += 1
        rf = next((a.get("value") for a in node.get("attrs", []) if a.get("name") == "rf_id"), None)
        if rf is not None and rf in rf_ids:
            matched += 1
    return matched, total


def gpu_names(doc):
    names = {}
    for e in doc.get("traceEvents", []):
        if isinstance(e, dict) and e.get("ph") == "X" and e.get("cat") in COUNTED_CATS:
            names[e.get("name", "")] = names.get(e.get("name", ""), 0) + 1
    return names


def compare_counts(ours, theirs):
    """Per-name rows (name, ours, theirs, diff %), largest difference first."""
    rows = []
    for name in set(ours) | set(theirs):
        a, b = ours.get(name, 0), theirs.get(name, 0)
        rows.append((name, a, b, 100.0 * abs(a - b) / max(a, b, 1)))
    rows.sort(key=lambda r: (-r[3], r[0]))
    return rows


def median_ms(times, first, last):
    """Median of steps first..last (inclusive) of a step_ms list."""
    if not (0 <= first <= last < len(times)):
        raise InputError("steps %d..%d are not in a run of %d steps" % (first, last, len(times)))
    return statistics.median(times[first:last + 1])


def step_times(path, ranges):
    doc = load_json(path)
    times = doc.get("step_ms")
    if not isinstance(times, list) or not times:
        raise InputError("%s has no step_ms list" % path)
    return [median_ms(times, a, b) for a, b in ranges]


def pct(x):
    return "n/a" if x is None else "%.2f%%" % x


def ms3(values):
    return "/".join("n/a" if v is None else "%.3f" % v for v in values)


def launch_path_fails(fails, rule, total, linked, none_text, unlinked_text, example):
    """A way of launching GPU work that the job uses (driver calls, graph
    replays): GPU ops must come that way, and each must link to its op."""
    if not total:
        fails.append((rule, none_text))
    elif linked < total:
        fails.append((rule, "%d of %d %s, e.g. %s" % (total - linked, total, unlinked_text, example)))


def analyze(opts):
    """All figures and the failed criteria: (figures dict, [(name, text)])."""
    gpu_mode = opts.mode == "gpu"
    fails = []
    fig = {"mode": opts.mode, "kernels": None, "memcpys": None, "memsets": None, "ext_cov": None,
           "rf_join": None, "dropped": None, "launches_outside_step": None, "gpu_before_launch": None,
           "count_diff_max": None, "streams": None, "cupti": None, "clock": None,
           "shim_ms": [None] * 3, "profiler_ms": [None] * 3, "ratio_after": None,
           "profiler_ratio_after": None, "check": None, "count_rows": [],
           "job": opts.job, "via_driver": None, "via_graph": None}
    first, last = opts.window
    ranges = [tuple(opts.before), (first, last), tuple(opts.after)]

    # --- the capture under the shim --------------------------------------
    facts = None
    try:
        et_path, dev_path = find_capture(opts.capture)
        facts = device_facts(load_json(dev_path))
        for key in ("kernels", "memcpys", "memsets", "launches_outside_step", "gpu_before_launch",
                    "streams", "cupti", "clock", "dropped", "gpu_unlinked", "launches",
                    "via_driver", "via_driver_linked", "via_graph", "via_graph_linked", "graph_ops"):
            fig[key] = facts[key]
        counted = facts["kernels"] + facts["memcpys"]
        fig["ext_cov"] = 100.0 * facts["ext_linked"] / counted if counted else None
        fig["ext_present"] = 100.0 * facts["ext_present"] / counted if counted else None
        matched, total = et_join(load_json(et_path), facts["rf_ids"])
        fig["rf_join"] = 100.0 * matched / total if total else None
        fig["rf_join_counts"] = [matched, total]
        fig["examples"] = facts["examples"]
    except InputError as e:
        fails.append(("capture", str(e)))
    if facts is not None:
        want = list(range(first, last + 1))
        if facts["captured"] != want or facts["steps"] != want:
            fails.append(("window", "metadata captured %s, ProfilerStep#N %s; expected steps %s" % (
                facts["captured"], facts["steps"], want)))
        if fig["rf_join"] is None or fig["rf_join"] < RF_JOIN_MIN:
            fails.append(("rf_join", "%s of ET op nodes find their rf_id in the device trace (need >= %.0f%%): %s"
                          % (pct(fig["rf_join"]), RF_JOIN_MIN, fig.get("rf_join_counts"))))
        if fig["dropped"] != 0:
            fails.append(("dropped", "metadata dropped_records = %r (need 0)" % (fig["dropped"],)))
        if fig["launches_outside_step"]:
            fails.append(("launches_outside_step", "%d of %d launches lie outside every ProfilerStep#N, e.g. %s"
                          % (fig["launches_outside_step"], fig["launches"],
                             facts["examples"].get("launch_outside_step"))))
        if fig["gpu_before_launch"]:
            fails.append(("gpu_before_launch", "%d GPU ops start before their launch, e.g. %s"
                          % (fig["gpu_before_launch"], facts["examples"].get("gpu_before_launch"))))
        if gpu_mode:
            if fig["cupti"] != "ok":
                fails.append(("cupti", "metadata device_trace.cupti = %r (need 'ok')" % (fig["cupti"],)))
            if not fig["kernels"]:
                fails.append(("kernels", "no kernel in the device trace"))
            if not fig["memcpys"]:
                fails.append(("memcpys", "no gpu_memcpy in the device trace"))
            if fig["ext_cov"] is None or fig["ext_cov"] < EXT_COV_MIN:
                fails.append(("ext_cov", "%s of kernels+memcpys link to their launching op by External id "
                              "(need >= %.0f%%; %s carry one), e.g. %s" % (
                                  pct(fig["ext_cov"]), EXT_COV_MIN, pct(fig.get("ext_present")),
                                  facts["examples"].get("ext_unlinked", "none"))))
            if opts.job != "graphs" and (fig["streams"] or 0) < 2:
                fails.append(("streams", "GPU ops on %s stream(s); the job uses two" % fig["streams"]))
            if opts.job == "compiled":
                launch_path_fails(fails, "driver_launches", fig["via_driver"], fig["via_driver_linked"],
                                  "no kernel launched through %s (Inductor's Triton kernels)"
                                  % "/".join(sorted(DRIVER_LAUNCH_NAMES)),
                                  "driver-launched kernels do not link to their op by External id",
                                  facts["examples"].get("driver_unlinked"))
            if opts.job == "graphs":
                launch_path_fails(fails, "graph_launches", fig["via_graph"], fig["via_graph_linked"],
                                  "no GPU op carries the correlation of a %s" % "/".join(sorted(GRAPH_LAUNCH_NAMES)),
                                  "GPU ops of replayed graphs do not link to the op that replayed them (inside %s)"
                                  % GRAPH_STEP_MARKER, facts["examples"].get("graph_unlinked"))

    # --- chakrashim check --json -------------------------------------------
    allowed = set() if gpu_mode else {"link.host_only"}
    try:
        check = load_json(opts.check_json)
        findings = [f for r in check.get("reports", []) for f in r.get("findings", [])]
        bad = [f for f in findings if f.get("severity") == "error" or
               (f.get("severity") == "warning" and f.get("rule") not in allowed)]
        fig["check"] = {"errors": check.get("errors"), "warnings": check.get("warnings"),
                        "rules": sorted({f.get("rule") for f in findings})}
        if bad or check.get("errors") or not check.get("reports"):
            fails.append(("check", "chakrashim check: %s errors, %s warnings: %s" % (
                check.get("errors"), check.get("warnings"),
                "; ".join("%s %s" % (f.get("rule"), f.get("detail")) for f in bad[:5]) or "no rank checked")))
    except InputError as e:
        fails.append(("check", str(e)))

    # --- torch.profiler's trace of the same steps ----------------------------
    try:
        theirs = gpu_names(load_json(opts.profiler_trace))
        rows = compare_counts(facts["names"] if facts else {}, theirs)
        fig["count_rows"] = rows
        fig["profiler_kernels_memcpys"] = sum(theirs.values())
        fig["count_diff_max"] = rows[0][3] if rows else 0.0
        if gpu_mode and not theirs:
            fails.append(("profiler", "torch.profiler's trace has no kernel or memcpy"))
        if fig["count_diff_max"] > COUNT_DIFF_MAX:
            fails.append(("count_diff", "kernel/memcpy counts by name differ from torch.profiler's by up to %s: %s"
                          % (pct(fig["count_diff_max"]), "; ".join(
                              "%r ours %d torch %d" % (n, a, b) for n, a, b, d in rows[:3] if d > COUNT_DIFF_MAX))))
    except InputError as e:
        fails.append(("profiler", str(e)))

    # --- step times ------------------------------------------------------
    for key, path in (("shim_ms", opts.shim_times), ("profiler_ms", opts.profiler_times)):
        try:
            fig[key] = step_times(path, ranges)
        except InputError as e:
            fails.append(("step_times", str(e)))
    if fig["shim_ms"][0] and fig["shim_ms"][2] is not None:
        fig["ratio_after"] = fig["shim_ms"][2] / fig["shim_ms"][0]
        if gpu_mode and fig["ratio_after"] > RATIO_AFTER_MAX:
            fails.append(("ratio_after", "step time after the window %.3f ms = %.3f x before (%.3f ms; need <= %.2f)"
                          % (fig["shim_ms"][2], fig["ratio_after"], fig["shim_ms"][0], RATIO_AFTER_MAX)))
    if fig["profiler_ms"][0] and fig["profiler_ms"][2] is not None:
        fig["profiler_ratio_after"] = fig["profiler_ms"][2] / fig["profiler_ms"][0]
    return fig, fails


def summary_line(fig, fails):
    def num(v):
        return "n/a" if v is None else str(v)
    ratio = "n/a" if fig["ratio_after"] is None else "%.3f" % fig["ratio_after"]
    pratio = "n/a" if fig["profiler_ratio_after"] is None else "%.3f" % fig["profiler_ratio_after"]
    return ("gpu-check: %s kernels=%s memcpys=%s ext_cov=%s rf_join=%s dropped=%s launches_outside_step=%s "
            "gpu_before_launch=%s count_diff_max=%s step_ms before/inside/after shim=%s profiler=%s "
            "ratio_after=%s profiler_ratio_after=%s memsets=%s gpu_unlinked=%s streams=%s via_driver=%s via_graph=%s "
            "cupti=%s clock=%s mode=%s job=%s" % (
                "FAIL" if fails else "PASS", num(fig["kernels"]), num(fig["memcpys"]), pct(fig["ext_cov"]),
                pct(fig["rf_join"]), num(fig["dropped"]), num(fig["launches_outside_step"]),
                num(fig["gpu_before_launch"]), pct(fig["count_diff_max"]), ms3(fig["shim_ms"]),
                ms3(fig["profiler_ms"]), ratio, pratio, num(fig["memsets"]), num(fig.get("gpu_unlinked")),
                num(fig["streams"]), num(fig["via_driver"]), num(fig["via_graph"]),
                num(fig["cupti"]), num(fig["clock"]), fig["mode"], fig["job"]))


def report_lines(fig, fails):
    return [summary_line(fig, fails)] + ["gpu-check: FAIL [%s] %s" % f for f in fails]


def write_json(path, fig, fails):
    doc = dict(fig)
    doc["pass"] = not fails
    doc["failures"] = [{"criterion": n, "detail": t} for n, t in fails]
    doc["count_rows"] = [{"name": n, "chakrashim": a, "torch_profiler": b, "diff_pct": d}
                         for n, a, b, d in fig["count_rows"]]
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1, sort_keys=True)
    os.replace(tmp, path)


def self_test():
    import unittest
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, here)
    suite = unittest.defaultTestLoader.discover(here, pattern="test_analyze.py")
    result = unittest.TextTestRunner(verbosity=1).run(suite)
    return 0 if result.wasSuccessful() and result.testsRun > 0 else 1


def parse_args(argv):
    ap = argparse.ArgumentParser(description="Judge one gpu-check run (see the module doc).")
    ap.add_argument("--self-test", action="store_true", help="run the unit tests and exit")
    ap.add_argument("--capture", help="chakrashim trace root of the run under the shim")
    ap.add_argument("--check-json", help="output of `chakrashim check DIR --json`")
    ap.add_argument("--shim-times", help="step times of the run under the shim")
    ap.add_argument("--profiler-trace", help="torch.profiler's chrome trace of the same steps")
    ap.add_argument("--profiler-times", help="step times of the torch.profiler run")
    ap.add_argument("--window", nargs=2, type=int, metavar=("S", "E"))
    ap.add_argument("--before", nargs=2, type=int, metavar=("A", "B"))
    ap.add_argument("--after", nargs=2, type=int, metavar=("C", "D"))
    ap.add_argument("--mode", choices=("gpu", "cpu"), default="gpu")
    ap.add_argument("--job", choices=JOBS, default="eager",
                    help="the train_cuda.py job judged (adds its criteria in GPU mode)")
    ap.add_argument("--json-out")
    ap.add_argument("--summary-out")
    opts = ap.parse_args(argv)
    if not opts.self_test:
        missing = [n for n in ("capture", "check_json", "shim_times", "profiler_trace", "profiler_times",
                               "window", "before", "after") if getattr(opts, n) is None]
        if missing:
            ap.error("missing " + ", ".join("--" + n.replace("_", "-") for n in missing))
    return opts


def main(argv=None):
    opts = parse_args(sys.argv[1:] if argv is None else argv)
    if opts.self_test:
        return self_test()
    fig, fails = analyze(opts)
    lines = report_lines(fig, fails)
    print("\n".join(lines), flush=True)
    if opts.summary_out:
        with open(opts.summary_out, "w") as f:
            f.write("\n".join(lines) + "\n")
    if opts.json_out:
        write_json(opts.json_out, fig, fails)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
