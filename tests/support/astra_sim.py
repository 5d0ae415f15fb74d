"""Running ASTRA-sim (analytical, congestion-unaware backend) on the .et files
`chakrashim convert` writes: its three small configuration files, the
command, and what it prints. Standard library only; used by
tests/tools/test_simulate.py and scripts/bench/bench_simulate.py, and
docs/simulate.md shows the same commands.

ASTRA-sim's exit status is not reliable: a run is judged by its
"sys[R] finished, N cycles" lines, one per rank (a cycle is 1 ns).
"""
import json
import os
import re
import subprocess

# examples/system/native_collectives/Ring_4chunks.json of astra-sim 518bd51.
SYSTEM = {
    "scheduling-policy": "LIFO", "endpoint-delay": 10, "active-chunks-per-dimension": 1,
    "preferred-dataset-splits": 4, "all-reduce-implementation": ["ring"],
    "all-gather-implementation": ["ring"], "reduce-scatter-implementation": ["ring"],
    "all-to-all-implementation": ["ring"], "collective-optimization": "localBWAware",
    "local-mem-bw": 1600, "boost-mode": 0, "roofline-enabled": 0, "peak-perf": 900,
}
REMOTE_MEMORY = {"memory-type": "NO_MEMORY_EXPANSION"}
FINISHED = re.compile(r"sys\[(\d+)\] finished, (\d+) cycles")


def write_configs(folder, npus):
    """system.json, remote_memory.json and network.yml (a ring of `npus`,
    50 GB/s, 500 ns) in folder; returns their paths."""
    os.makedirs(folder, exist_ok=True)
    paths = {k: os.path.join(folder, n) for k, n in
             (("system", "system.json"), ("memory", "remote_memory.json"), ("network", "network.yml"))}
    with open(paths["system"], "w") as f:
        json.dump(SYSTEM, f, indent=2)
    with open(paths["memory"], "w") as f:
        json.dump(REMOTE_MEMORY, f)
    with open(paths["network"], "w") as f:
        f.write("topology: [ Ring ]\nnpus_count: [ %d ]\nbandwidth: [ 50.0 ]  # GB/s\nlatency: [ 500.0 ]  # ns\n" % npus)
    return paths


def command(binary, prefix, configs, comm_groups=None):
    cmd = [binary, "--workload-configuration=" + prefix, "--system-configuration=" + configs["system"],
           "--remote-memory-configuration=" + configs["memory"], "--network-configuration=" + configs["network"]]
    if comm_groups:
        cmd.append("--comm-group-configuration=" + comm_groups)
    return cmd


def run(binary, prefix, npus, folder, comm_groups=None, timeout=600, network=None):
    """Runs ASTRA-sim on PREFIX.R.et for R < npus, in folder (it writes its
    logs there), on `network` (a network.yml, such as the PREFIX.network.yml
    convert fits) or the default ring. Returns ({rank: cycles} of the
    finished lines, output)."""
    configs = write_configs(os.path.join(folder, "configs"), npus)
    if network:
        configs["network"] = network
    r = subprocess.run(command(binary, prefix, configs, comm_groups), cwd=folder, capture_output=True, text=True,
                       timeout=timeout)
    out = r.stdout + r.stderr
    return {int(m.group(1)): int(m.group(2)) for m in FINISHED.finditer(out)}, out


def finished_lines(output):
    return [line for line in output.splitlines() if FINISHED.search(line)]
