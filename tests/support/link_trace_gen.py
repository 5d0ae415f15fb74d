#!/usr/bin/env python3
"""Writes a realistic host ET and device trace pair for `chakrashim link`
tests and benchmarks, of a chosen shape and size.

    link_trace_gen.py --et ET --device DEV [--rank R] [--steps N]
        [--ops-per-step N] [--depth N] [--threads N] [--kernels-per-op N]
        [--nccl-share F] [--arg-size N] [--device-mb MB] [--world-size N]

The shape follows what torch and Kineto write (docs/trace-format.md) and what
`chakrashim check` accepts:
  - per step, on the main thread, ProfilerStep#N (user_annotation) spanning
    the step; `--ops-per-step` top-level ops spread round-robin over
    `--threads` threads, each a nest of `--depth` ops (cpu_op, outermost a
    user_annotation), ending with Optimizer.step#SGD.step on the main thread;
  - each innermost op launches `--kernels-per-op` GPU ops: kernels
    (cudaLaunchKernel) and every eighth a memcpy (cudaMemcpyAsync), with
    ac2g flows; a `--nccl-share` fraction of the top-level ops are
    collectives whose record_param_comms launches an ncclDevKernel with a
    Process Group Name; one cudaMemsetAsync + gpu_memset per step, which
    Chakra does not link;
  - every ET node has the seven attrs and `--arg-size` input tensors, which
    the device trace's cpu_ops mirror as Input Dims / Input type;
  - ET nodes are written the way torch's observer writes them: each when its
    op closes (children first), the thread and root nodes last, so the ids
    are not in file order.
`--device-mb` keeps adding steps until the device trace reaches that size
(`--steps` is then a minimum). A .gz name writes gzip.
"""
import argparse
import gzip
import json

SCHEMA = "1.1.1-chakra.0.0.4"
BASE_NS = 1710720000000000000
PID = 4242
KERNELS = [
    "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
    "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)",
    "sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize128x128x32_warpgroupsize1x1x1_execute_segment_k_off_kernel",
    "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanOps<float, float, "
    "float, float>, unsigned int, float, 4> >(at::native::ReduceOp<float, at::native::MeanOps<float, float, "
    "float, float>, unsigned int, float, 4>)",
    "void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4>(cutlass_80_tensorop_"
    "s1688gemm_128x128_32x3_nn_align4::Params)",
]
CPU_NAMES = ["aten::linear", "aten::addmm", "aten::mul", "aten::add_", "aten::copy_", "aten::layer_norm",
             "aten::native_layer_norm", "aten::gelu", "aten::matmul", "aten::mm"]
NCCL_KERNEL = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"


def us(ns):
    return "%d.%03d" % (ns // 1000, ns % 1000)


def open_out(path):
    return gzip.open(path, "wt", compresslevel=1) if path.endswith(".gz") else open(path, "w")


class Generator:
    def __init__(self, a, et, dev):
        self.a, self.et, self.dev = a, et, dev
        self.next_rf = 0
        self.next_corr = 1000
        self.next_node = a.threads + 2  # 1: root, 2..threads+1: thread nodes
        self.first_node = True
        self.first_event = True
        self.dev_bytes = 0
        self.stream_free = {7: 0, 20: 0}
        self.tids = [PID + 1 + t for t in range(a.threads)]
        self.arg_dims = json.dumps([[64, 128]] * a.arg_size)
        self.arg_types = json.dumps(["float"] * a.arg_size)
        tensors = [[1000 + i, 2000 + i, 0, 8192, 4, "cuda:0"] for i in range(a.arg_size)]
        self.inputs = json.dumps({"values": tensors, "shapes": [[64, 128]] * a.arg_size,
                                  "types": ["Tensor(float)"] * a.arg_size, "strides": [[128, 1]] * a.arg_size})
        self.outputs = json.dumps({"values": [], "shapes": [], "types": [], "strides": []})

    # --- writing -----------------------------------------------------------
    def event(self, text):
        if not self.first_event:
            text = ",\n" + text
        self.first_event = False
        self.dev.write(text)
        self.dev_bytes += len(text)

    def span(self, ph, cat, name, pid, tid, start, dur, args):
        self.event('{"ph": "%s", "cat": "%s", "name": %s, "pid": %d, "tid": %d, "ts": %s, "dur": %s, "args": %s}'
                   % (ph, cat, json.dumps(name), pid, tid, us(start), us(dur), args))

    def node(self, nid, name, parent, rf_id, tid, with_args=True):
        attrs = ('[{"name": "rf_id", "type": "uint64", "value": %d}, {"name": "fw_parent", "type": "uint64", '
                 '"value": 0}, {"name": "seq_id", "type": "int64", "value": -1}, {"name": "scope", "type": '
                 '"uint64", "value": 0}, {"name": "tid", "type": "uint64", "value": %d}, {"name": "fw_tid", '
                 '"type": "uint64", "value": 0}, {"name": "op_schema", "type": "string", "value": ""}]'
                 % (rf_id, tid))
        text = '{"id": %d, "name": %s, "ctrl_deps": %d, "inputs": %s, "outputs": %s, "attrs": %s}' % (
            nid, json.dumps(name), parent, self.inputs if with_args else self.outputs, self.outputs, attrs)
        self.et.write(text if self.first_node else ",\n" + text)
        self.first_node = False

    # --- shapes ------------------------------------------------------------
    def launch(self, tid, ext, t, kind):
        """A launch at host time t and its GPU op; returns the launch's end."""
        self.next_corr += 1
        corr = self.next_corr
        if kind == "nccl":
            runtime, cat, name, stream, dur = "cudaLaunchKernel", "kernel", NCCL_KERNEL, 20, 40_000
        elif kind == "memcpy":
            runtime, cat, name, stream, dur = "cudaMemcpyAsync", "gpu_memcpy", "Memcpy HtoD (Pageable -> Device)", 7, 3_000
        else:
            runtime, cat, name, stream, dur = "cudaLaunchKernel", "kernel", KERNELS[corr % len(KERNELS)], 7, 6_000
        self.span("X", "cuda_runtime", runtime, PID, tid, t, 4_000,
                  '{"External id": %d, "cbid": 211, "correlation": %d}' % (ext, corr))
        start = max(t + 5_000, self.stream_free[stream])
        self.stream_free[stream] = start + dur + 500
        extra = ', "Process Group Name": "0", "Process Group Description": "default_pg"' if kind == "nccl" else ""
        self.span("X", cat, name, 0, stream, start, dur,
                  '{"External id": %d, "device": 0, "stream": %d, "correlation": %d%s}' % (ext, stream, corr, extra))
        self.event('{"ph": "s", "id": %d, "pid": %d, "tid": %d, "ts": %s, "cat": "ac2g", "name": "ac2g"}'
                   % (corr, PID, tid, us(t)))
        self.event('{"ph": "f", "id": %d, "pid": 0, "tid": %d, "ts": %s, "cat": "ac2g", "name": "ac2g", "bp": "e"}'
                   % (corr, stream, us(start)))
        return t + 4_000

    def nest(self, thread, parent_node, t, level, top_name, nccl):
        """One op and its nested ops from host time t; returns its end."""
        tid = self.tids[thread]
        self.next_rf += 1
        rf = ext = self.next_rf
        nid = self.next_node
        self.next_node += 1
        innermost = level == self.a.depth - 1
        if level == 0:
            name, cat = top_name, "user_annotation"
        elif innermost and nccl:
            name, cat = "record_param_comms", "cpu_op"
        else:
            name, cat = CPU_NAMES[(rf + level) % len(CPU_NAMES)], "cpu_op"
        if self.a.depth == 1:
            cat = "cpu_op"
        cursor = t + 2_000
        if innermost:
            for k in range(self.a.kernels_per_op):
                kind = "nccl" if nccl else ("memcpy" if (rf + k) % 8 == 7 else "kernel")
                cursor = self.launch(tid, ext, cursor, kind) + 1_000
        else:
            cursor = self.nest(thread, nid, cursor, level + 1, top_name, nccl) + 1_000
        end = cursor + 1_000
        self.span("X", cat, name, PID, tid, t, end - t,
                  '{"External id": %d, "Record function id": %d, "Sequence number": %d, "Fwd thread id": 0, '
                  '"Input Dims": %s, "Input type": %s}' % (ext, rf, rf, self.arg_dims, self.arg_types))
        self.node(nid, name, parent_node, rf, thread + 1)
        return end

    def step(self, n, t0):
        """Step n from t0; returns its end."""
        a = self.a
        cursors = [t0 + 10_000 + 3_000 * t for t in range(a.threads)]
        collectives = int(round(a.ops_per_step * a.nccl_share))
        for j in range(a.ops_per_step):
            thread = j % a.threads
            nccl = j >= a.ops_per_step - collectives
            top = "c10d::allreduce_" if nccl else "## forward %d ##" % j
            cursors[thread] = self.nest(thread, 2 + thread, cursors[thread], 0, top, nccl) + 2_000
        # One memset per step, launched outside any linkable op.
        self.next_corr += 1
        self.span("X", "cuda_runtime", "cudaMemsetAsync", PID, self.tids[0], cursors[0], 2_000,
                  '{"cbid": 51, "correlation": %d}' % self.next_corr)
        self.span("X", "gpu_memset", "Memset (Device)", 0, 7, max(cursors[0] + 3_000, self.stream_free[7]), 1_000,
                  '{"device": 0, "stream": 7, "correlation": %d}' % self.next_corr)
        opt_start = max(cursors) + 5_000
        end = self.nest(0, 2, opt_start, 0, "Optimizer.step#SGD.step", False)
        self.next_rf += 1
        self.span("X", "user_annotation", "ProfilerStep#%d" % n, PID, self.tids[0], t0, end - t0,
                  '{"External id": %d}' % self.next_rf)
        return end


def generate(et_path, device_path, rank=0, steps=3, ops_per_step=20, depth=3, threads=2, kernels_per_op=2,
             nccl_share=0.1, arg_size=2, device_mb=None, world_size=1):
    """Writes the pair; returns (steps written, device trace bytes)."""
    a = argparse.Namespace(rank=rank, steps=steps, ops_per_step=ops_per_step, depth=max(1, depth),
                           threads=max(1, threads), kernels_per_op=kernels_per_op, nccl_share=nccl_share,
                           arg_size=arg_size)
    with open_out(et_path) as et, open_out(device_path) as dev:
        et.write('{"schema": "%s", "pid": %d, "time": "2026-01-01 00:00:00", "start_ts": 1000, "nodes": [\n'
                 % (SCHEMA, PID))
        dev.write('{\n"schemaVersion": 1,\n"deviceProperties": [{"id": 0, "name": "NVIDIA H100", '
                  '"totalGlobalMem": 85000000000, "computeMajor": 9, "computeMinor": 0, "numSms": 132}],\n'
                  '"distributedInfo": {"backend": "nccl", "rank": %d, "world_size": %d},\n"traceEvents": [\n' % (rank, world_size))
        g = Generator(a, et, dev)
        t, n = 1_000_000_000, 0
        target = device_mb * 1024 * 1024 if device_mb else 0
        while n < a.steps or g.dev_bytes < target:
            t = g.step(n + 1, t) + 3_000_000  # 3 ms between steps
            n += 1
        for thread in range(a.threads):
            g.node(2 + thread, "[pytorch|profiler|execution_trace|thread]", 1, 0, thread + 1, False)
        g.node(1, "[pytorch|profiler|execution_trace|process]", 1, 0, 0, False)
        et.write('\n], "finish_ts": 2000}\n')
        meta = {"version": "0.1.0", "torch_version": "2.5.0",
                "steps": {"start": 1, "end": n, "warmup": 0, "active": n, "captured": list(range(1, n + 1)),
                          "cut_short": False, "partial_last_step": None, "reason": "end_step"},
                "ranks": {"filter": None, "world_size": world_size}, "host_trace": "on",
                "device_trace": {"cupti": "ok", "dropped_records": 0, "clock": "realtime", "truncated_at": None}}
        dev.write('\n],\n"traceName": "rank-%d",\n"displayTimeUnit": "ms",\n"baseTimeNanoseconds": %d,\n'
                  '"chakrashim": %s\n}\n' % (rank, BASE_NS, json.dumps(meta)))
    return n, g.dev_bytes


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--et", required=True)
    p.add_argument("--device", required=True)
    p.add_argument("--rank", type=int, default=0)
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--ops-per-step", type=int, default=20)
    p.add_argument("--depth", type=int, default=3)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--kernels-per-op", type=int, default=2)
    p.add_argument("--nccl-share", type=float, default=0.1)
    p.add_argument("--arg-size", type=int, default=2)
    p.add_argument("--device-mb", type=float)
    p.add_argument("--world-size", type=int, default=1)
    a = p.parse_args()
    n, size = generate(a.et, a.device, a.rank, a.steps, a.ops_per_step, a.depth, a.threads, a.kernels_per_op,
                       a.nccl_share, a.arg_size, a.device_mb, a.world_size)
    print("%d steps, device trace %.1f MB" % (n, size / 1e6))


if __name__ == "__main__":
    main()
