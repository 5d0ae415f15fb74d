"""Turns a real gloo capture's point-to-point ops into what a CUDA job over
NCCL records (issue #50), for convert's tests on a machine without a GPU.

ProcessGroupNCCL opens record_param_comms inside each c10d::send / recv_
(torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp, RECORD_PARAM_COMMS_DATA)
and launches an ncclDevKernel_SendRecv kernel on its own stream: inside that
scope for a send or recv, or once for a whole batch_isend_irecv group at
ncclGroupEnd (coalesced), after the group's last op. Kineto gives the kernel
record_param_comms' External id and copies its "Process Group Name".

make_nccl(root) rewrites every rank of root/0_chakra and root/0_kineto in
place: a record_param_comms child (ET node and cpu_op) under each
point-to-point op, and a cudaLaunchKernel + kernel + ac2g flow under it; with
group=N > 1 only under the last of every N point-to-point ops in time order,
as if each N were one batch_isend_irecv (one kernel for them); with compute
(the default), a kernel on the compute stream under each aten::addmm and
aten::mm. It returns, per rank, (point-to-point ops, their kernels)."""
import glob
import json
import os

P2P = ("c10d::send", "c10d::recv_")
KERNEL = "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)"
NCCL_STREAM = 20
COMPUTE_STREAM = 7
GEMMS = ("aten::addmm", "aten::mm")


def _attr(node, name):
    for a in node["attrs"]:
        if a["name"] == name:
            return a["value"]
    return None


def _runs(p2p, size):
    """The ops in time order, cut into runs of `size` (a batch_isend_irecv
    group each)."""
    ops = sorted(p2p, key=lambda n: n["_ts"])
    return [ops[i:i + size] for i in range(0, len(ops), size)]


def _rank(et_path, dev_path, group, compute):
    with open(et_path) as f:
        et = json.load(f)
    with open(dev_path) as f:
        dev = json.load(f)
    events = dev["traceEvents"]
    by_rf = {e["args"]["Record function id"]: e for e in events
             if e.get("ph") == "X" and "Record function id" in e.get("args", {})}
    nodes = et["nodes"]
    for n in nodes:
        e = by_rf.get(_attr(n, "rf_id"))
        n["_ts"] = float(e["ts"]) if e else -1.0
    p2p = [n for n in nodes if n["name"] in P2P and n["_ts"] >= 0]
    launching = set()
    for run in _runs(p2p, max(1, group)):
        launching.add(run[-1]["id"])
    next_id = max(n["id"] for n in nodes) + 1
    # Kineto's External ids and torch's record function ids are apart: a new
    # op's (both alike here) is above every id of either.
    next_rf = max([max(by_rf), max(_attr(n, "rf_id") or 0 for n in nodes)] +
                  [e["args"]["External id"] for e in events if "External id" in e.get("args", {})]) + 1
    next_corr = 1
    stream_free = {NCCL_STREAM: 0.0, COMPUTE_STREAM: 0.0}
    added_nodes, added_events = [], []

    def launch(op, ext, launch_ts, launch_dur, stream, name, dur, args):
        nonlocal next_corr
        corr = next_corr
        next_corr += 1
        start = max(launch_ts + 5.0, stream_free[stream])
        stream_free[stream] = start + dur + 1.0
        kernel_args = {"External id": ext, "device": 0, "stream": stream, "correlation": corr}
        kernel_args.update(args)
        added_events.extend([
            {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": op["pid"], "tid": op["tid"],
             "ts": launch_ts, "dur": launch_dur, "args": {"External id": ext, "cbid": 211, "correlation": corr}},
            {"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": stream, "ts": start, "dur": dur,
             "args": kernel_args},
            {"ph": "s", "id": corr, "pid": op["pid"], "tid": op["tid"], "ts": launch_ts, "cat": "ac2g",
             "name": "ac2g"},
            {"ph": "f", "id": corr, "pid": 0, "tid": stream, "ts": start, "cat": "ac2g", "name": "ac2g",
             "bp": "e"},
        ])

    # The model's matrix products run on the GPU's compute stream.
    if compute:
        for e in sorted((e for e in events if e.get("ph") == "X" and e.get("name") in GEMMS),
                        key=lambda e: float(e["ts"])):
            ts, dur = float(e["ts"]), float(e["dur"])
            launch(e, e["args"]["External id"], ts + dur * 0.25, dur * 0.25, COMPUTE_STREAM,
                   "sm90_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize128x128x32", 20.0, {})
    for n in sorted(p2p, key=lambda n: n["_ts"]):
        op = by_rf[_attr(n, "rf_id")]
        rf = next_rf
        next_rf += 1
        ts, dur = float(op["ts"]), float(op["dur"])
        rpc_ts, rpc_dur = ts + dur * 0.1, dur * 0.5
        attrs = [dict(a) for a in n["attrs"]]
        for a in attrs:
            if a["name"] == "rf_id":
                a["value"] = rf
            elif a["name"] == "op_schema":
                a["value"] = ""
        added_nodes.append({"id": next_id, "name": "record_param_comms", "ctrl_deps": n["id"],
                            "inputs": n["inputs"], "outputs": {"values": [], "shapes": [], "types": [], "strides": []},
                            "attrs": attrs})
        next_id += 1
        added_events.append({"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": op["pid"],
                             "tid": op["tid"], "ts": rpc_ts, "dur": rpc_dur,
                             "args": {"External id": rf, "Record function id": rf}})
        if n["id"] not in launching:
            continue
        launch(op, rf, rpc_ts + rpc_dur * 0.25, rpc_dur * 0.25, NCCL_STREAM, KERNEL, 30.0,
               {"Collective name": "send" if n["name"] == "c10d::send" else "recv",
                "Process Group Name": "0", "Process Group Description": "default_pg"})
    for n in nodes:
        del n["_ts"]
    et["nodes"] = nodes + added_nodes
    events += added_events
    meta = dev.get("chakrashim", {}).get("device_trace")
    if meta is not None:
        meta["cupti"] = "ok"
    dev.setdefault("distributedInfo", {})["backend"] = "nccl"
    for path, data in ((et_path, et), (dev_path, dev)):
        with open(path, "w") as f:
            json.dump(data, f)
    return len(p2p), len(launching)


def make_nccl(root, group=1, compute=True):
    out = {}
    for et_path in sorted(glob.glob(os.path.join(root, "0_chakra", "rank-*.json"))):
        name = os.path.basename(et_path)
        rank = int(name[len("rank-"):-len(".json")])
        out[rank] = _rank(et_path, os.path.join(root, "0_kineto", name), group, compute)
    return out
