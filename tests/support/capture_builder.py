"""Small, good captures in chakrashim's own format, for `chakrashim check`.

A capture is a trace root with JOB_chakra/rank-R.json (a host ET shaped the
way torch's ExecutionTraceObserver writes it) and JOB_kineto/rank-R.json (the
device trace the way shim/src/writers/kineto_trace_writer.cpp writes it: the
same key order, `"rank": R` with a space, times as microseconds with three
decimals, and the `chakrashim` metadata object last). Tests build one, change
exactly one thing, and run the check.

Each step N holds, on the stepping thread:
  ProfilerStep#N                      user_annotation, no Record function id
    aten::linear                      cpu_op
      aten::addmm                     cpu_op (on GPU: launches a kernel)
    aten::copy_                       cpu_op (on GPU: launches a memcpy)
    Optimizer.step#SGD.step           user_annotation, ends with the step
      aten::add_                      cpu_op
"""
import json
import os

SCHEMA = "1.1.1-chakra.0.0.4"
BASE_NS = 1710720000000000000
PID = 4242
TID = 4243
SEVEN_ATTRS = ("rf_id", "fw_parent", "seq_id", "scope", "tid", "fw_tid", "op_schema")


def us(ns):
    """Integer nanoseconds -> Kineto's microseconds text: 1234567 -> 1234.567."""
    sign = "-" if ns < 0 else ""
    ns = abs(ns)
    return "%s%d.%03d" % (sign, ns // 1000, ns % 1000)


class Span:
    def __init__(self, cat, name, start, end, rf_id=None, ext=None, parent=None, **extra):
        self.cat, self.name, self.start, self.end = cat, name, start, end
        self.rf_id, self.ext, self.parent = rf_id, ext, parent
        self.pid = extra.pop("pid", PID)
        self.tid = extra.pop("tid", TID)
        self.args = extra.pop("args", {})
        self.marker = extra.pop("marker", False)
        self.step = extra.pop("step", None)


# A span of each phase (docs/report.md, "Step phases"), for slow steps.
PHASE_SPANS = {"data": "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
               "backward": "AddmmBackward0", "communication": "c10d::allreduce_"}


class RankCapture:
    """One rank's pair, as Python data until written."""

    def __init__(self, rank=0, world_size=1, steps=(3, 4), gpu=False, ranks_filter=None, slow=None, pid=PID):
        """slow: {step: extra ns}: those steps run longer, in time outside
        any op at their end (later steps move later); or {step: (extra ns,
        phase)}: longer by a span of that phase (PHASE_SPANS) before the
        optimizer step. pid: the process's,
        in the ET and on its host events (ranks of one job differ in it)."""
        self.rank, self.world_size, self.steps, self.gpu = rank, world_size, list(steps), gpu
        self.pid = pid
        self.spans = []  # host and device events, in write order
        self.ranks_filter = ranks_filter
        self.meta = {
            "version": "0.1.0", "torch_version": "2.13.0",
            "steps": {"start": self.steps[0], "end": self.steps[-1], "warmup": 0,
                      "active": len(self.steps), "captured": list(self.steps),
                      "cut_short": False, "partial_last_step": None, "reason": "end_step"},
            "ranks": {"filter": ranks_filter, "world_size": world_size},
            "host_trace": "on",
            "device_trace": {"cupti": "ok" if gpu else "absent", "dropped_records": 0,
                             "clock": "realtime", "truncated_at": None},
        }
        self.et_schema = SCHEMA
        self._next_id = 0
        self._corr = 100
        t0 = 1_000_000
        for n in self.steps:
            extra, phase = (slow or {}).get(n, 0), None
            if isinstance(extra, tuple):
                extra, phase = extra
            self._add_step(n, t0, extra, phase)
            t0 += 1_000_000 + extra
        for span in self.spans:
            if span.pid == PID:  # host events; GPU events carry the device's
                span.pid = pid

    def _ids(self):
        self._next_id += 1
        return self._next_id

    def _op(self, cat, name, start, end, parent, **kw):
        rf = self._ids()
        span = Span(cat, name, start, end, rf_id=rf, ext=rf, parent=parent, **kw)
        self.spans.append(span)
        return span

    def _launch(self, op, name, kind, start):
        self._corr += 1
        launch = Span("cuda_runtime", name, start, start + 5_000, ext=op.ext,
                      args={"cbid": 211, "correlation": self._corr})
        gpu = Span(kind, "void gemm_kernel()" if kind == "kernel" else "Memcpy HtoD", start + 20_000,
                   start + 40_000, ext=op.ext, pid=0, tid=7,
                   args={"device": 0, "stream": 7, "correlation": self._corr})
        self.spans += [launch, gpu]

    def _add_step(self, n, t0, extra=0, phase=None):
        ext = self._ids()
        self.spans.append(Span("user_annotation", "ProfilerStep#%d" % n, t0, t0 + 900_000 + extra, ext=ext, step=n))
        linear = self._op("cpu_op", "aten::linear", t0 + 10_000, t0 + 300_000, None)
        addmm = self._op("cpu_op", "aten::addmm", t0 + 20_000, t0 + 250_000, linear)
        if self.gpu:
            self._launch(addmm, "cudaLaunchKernel", "kernel", t0 + 30_000)
        copy = self._op("cpu_op", "aten::copy_", t0 + 310_000, t0 + 400_000, None)
        if self.gpu:
            self._launch(copy, "cudaMemcpyAsync", "gpu_memcpy", t0 + 320_000)
        shift = 0
        if phase:
            self._op("cpu_op", PHASE_SPANS[phase], t0 + 400_000, t0 + 400_000 + extra, None)
            shift = extra
        opt = self._op("user_annotation", "Optimizer.step#SGD.step", t0 + 500_000 + shift, t0 + 900_000 + shift,
                       None, marker=True)
        self._op("cpu_op", "aten::add_", t0 + 510_000 + shift, t0 + 600_000 + shift, opt)

    # --- the ET -------------------------------------------------------------
    def et_nodes(self):
        """ET nodes for the host ops: thread node 2, ops from 3 on, root 1 last."""
        def node(nid, name, parent, rf_id, tid):
            attrs = [{"name": "rf_id", "type": "uint64", "value": rf_id},
                     {"name": "fw_parent", "type": "uint64", "value": 0},
                     {"name": "seq_id", "type": "int64", "value": -1},
                     {"name": "scope", "type": "uint64", "value": 0},
                     {"name": "tid", "type": "uint64", "value": tid},
                     {"name": "fw_tid", "type": "uint64", "value": 0},
                     {"name": "op_schema", "type": "string", "value": ""}]
            empty = {"values": [], "shapes": [], "types": [], "strides": []}
            return {"id": nid, "name": name, "ctrl_deps": parent, "inputs": empty,
                    "outputs": dict(empty), "attrs": attrs}
        nodes = [node(2, "[pytorch|profiler|execution_trace|thread]", 1, 0, 1)]
        ids = {}
        for span in self.spans:
            if span.rf_id is None or span.cat not in ("cpu_op", "user_annotation"):
                continue
            ids[id(span)] = nid = len(nodes) + 2
            parent = ids[id(span.parent)] if span.parent is not None else 2
            nodes.append(node(nid, span.name, parent, span.rf_id, 1))
        nodes.append(node(1, "[pytorch|profiler|execution_trace|process]", 1, 0, 0))
        return nodes

    def et_text(self, nodes=None):
        """The ET document, key order as torch writes it."""
        doc = {"schema": self.et_schema, "pid": self.pid, "time": "2026-01-01 00:00:00", "start_ts": 1000,
               "nodes": self.et_nodes() if nodes is None else nodes, "finish_ts": 2000}
        return json.dumps(doc, indent=1)

    # --- the device trace ---------------------------------------------------
    def event_text(self, span):
        fields = [("ph", "X"), ("cat", span.cat), ("name", span.name), ("pid", span.pid),
                  ("tid", span.tid)]
        head = ", ".join("%s: %s" % (json.dumps(k), json.dumps(v)) for k, v in fields)
        args = {}
        if span.ext is not None:
            args["External id"] = span.ext
        if span.rf_id is not None:
            args["Record function id"] = span.rf_id
        args.update(span.args)
        return '{%s, "ts": %s, "dur": %s, "args": %s}' % (
            head, us(span.start - 0), us(span.end - span.start), json.dumps(args))

    def device_text(self):
        info = {"backend": "gloo" if self.world_size > 1 else "", "rank": self.rank}
        if self.world_size > 1:
            info["world_size"] = self.world_size
        props = '[{"id": 0, "name": "NVIDIA H100", "totalGlobalMem": 85000000000}]' if self.gpu else "[]"
        lines = ['{', '"schemaVersion": 1,', '"deviceProperties": %s,' % props,
                 '"distributedInfo": %s,' % json.dumps(info), '"traceEvents": [']
        events = [self.event_text(s) for s in self.spans]
        lines.append(",\n".join(events))
        lines += ['],', '"traceName": "rank-%d",' % self.rank, '"displayTimeUnit": "ms",',
                  '"baseTimeNanoseconds": %d,' % BASE_NS, '"chakrashim": %s' % json.dumps(self.meta), '}']
        return "\n".join(lines) + "\n"

    # --- edits the tests make -------------------------------------------------
    def find(self, name, nth=0, cat=None):
        found = [s for s in self.spans if s.name == name and (cat is None or s.cat == cat)]
        return found[nth]


def write_many(root, ranks, slow=None, gpu=True, steps=(3, 4, 5), job="0", edit=None):
    """A capture of `ranks` ranks (a world of that size), each a small pair.
    slow: {rank: {step: extra ns}}; edit: {rank: fn(RankCapture)} applied
    before writing (to break a rank). Returns the RankCaptures."""
    caps = []
    for r in range(ranks):
        c = RankCapture(r, ranks, steps=steps, gpu=gpu, slow=(slow or {}).get(r))
        if edit and r in edit:
            edit[r](c)
        caps.append(c)
    write_capture(root, caps, job=job)
    return caps


def cut_in_half(path):
    """Keeps the first half of a written file: a writer stopped mid-way."""
    with open(path) as f:
        text = f.read()
    with open(path, "w") as f:
        f.write(text[: len(text) // 2])


def write_capture(root, captures, job="0", et_text=None, device_text=None):
    """Writes each RankCapture into root/JOB_chakra and root/JOB_kineto.
    et_text/device_text: optional {rank: text} overrides."""
    host_dir = os.path.join(root, job + "_chakra")
    device_dir = os.path.join(root, job + "_kineto")
    os.makedirs(host_dir, exist_ok=True)
    os.makedirs(device_dir, exist_ok=True)
    for c in captures:
        et = (et_text or {}).get(c.rank) or c.et_text()
        dev = (device_text or {}).get(c.rank) or c.device_text()
        with open(os.path.join(host_dir, "rank-%d.json" % c.rank), "w") as f:
            f.write(et)
        with open(os.path.join(device_dir, "rank-%d.json" % c.rank), "w") as f:
            f.write(dev)
    return host_dir, device_dir
