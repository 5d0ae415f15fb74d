"""Writes the fuzz targets' seed corpora into corpus/<target>/ (committed).
Run again after a format change: python3 tests/fuzz/make_seeds.py

Trace seeds come from tests/support/capture_builder.py, the same small
captures the check tests start from; the pair targets (link, check) read an
ET and a device trace split at a "====" line. The convert target reads an
ET+: `chakrashim link` makes it from those captures, so give the CLI
(CHAKRASHIM_TEST_CLI=build/tools/chakrashim); without it those seeds are
left as they are.
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "support"))
import capture_builder as cb  # noqa: E402

SEP = "\n====\n"


def write(target, name, text):
    d = os.path.join(HERE, "corpus", target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "w") as f:
        f.write(text)


def write_bytes(target, name, data):
    d = os.path.join(HERE, "corpus", target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def cupti_seeds():
    """CUPTI 13 activity buffers (cupti_decoder_fuzz.cpp), laid out by the
    offsets of cupti_activity.h: a launch, its external correlation and its
    kernel; a memcpy; an unfinished record; names after a 0xff byte."""
    import struct

    def rec(size, fields):
        b = bytearray(size)
        for off, fmt, v in fields:
            struct.pack_into("<" + fmt, b, off, v)
        return bytes(b) + bytes((-size) % 8)

    t = 1716423322416788000
    api = lambda kind, corr, start: rec(40, [(0, "I", kind), (4, "I", 211), (8, "Q", start),
                                             (16, "Q", start + 900), (24, "I", 42), (28, "I", 7),
                                             (32, "I", corr)])
    ext = lambda corr, eid: rec(24, [(0, "I", 39), (4, "I", 5), (8, "Q", eid), (16, "I", corr)])
    kernel = lambda corr, start: rec(216, [(0, "I", 10), (16, "Q", start), (24, "Q", start + 5000),
                                           (48, "I", 7), (52, "i", 4), (64, "i", 128), (92, "I", corr)])
    memcpy = lambda corr, start: rec(96, [(0, "I", 1), (4, "B", 1), (5, "B", 2), (6, "B", 3),
                                          (8, "Q", 4096), (16, "Q", start), (24, "Q", start + 700),
                                          (40, "I", 7), (44, "I", corr)])
    step = api(5, 1, t) + ext(1, 11) + kernel(1, t + 2000)
    write_bytes("cupti_decoder", "launch-kernel", step)
    write_bytes("cupti_decoder", "launch-memcpy", api(5, 2, t) + ext(2, 12) + memcpy(2, t + 1000))
    write_bytes("cupti_decoder", "unfinished", kernel(3, 0) + api(4, 4, t) + rec(40, [(0, "I", 5)]))
    write_bytes("cupti_decoder", "names", step * 3 + b"\xff_Z4gemmPf\0cudaMemcpyAsync_v3020")


def main():
    cupti_seeds()
    for v in ["0", "007", "18446744073709551615", "18446744073709551616", "true", "OFF", "yes",
              "64K", "1G", "2g", "1.5G", "0,4-7", "4-7", "7-4", "1,", "run_7.b", "..", "a/b",
              "a\nb"]:
        write("value_grammar", "v-" + "".join(c if c.isalnum() else "_" for c in v), v)

    envs = {
        "plain": "CHAKRA_PROFILE=1\nCHAKRA_TRACE_DIR=/t\nCHAKRA_START_STEP=2\nCHAKRA_END_STEP=9\n"
                 "CHAKRA_WARMUP_STEPS=1\nCHAKRA_ACTIVE_STEPS=2\n",
        "ranks": "CHAKRA_PROFILE=on\nCHAKRA_TRACE_DIR=/t\nCHAKRA_RANKS=0,4-7\nRANK=5\nWORLD_SIZE=8\n"
                 "SLURM_JOB_ID=77\nSLURM_PROCID=3\n",
        "filter": "python3.11\nCHAKRA_PROFILE=1\nCHAKRA_TRACE_DIR=/t\nCHAKRA_PROCESS_FILTER=^py(thon)?[0-9.]*$\n"
                  "CHAKRA_JOB_ID=run_7.b\nCHAKRA_MAX_MEMORY=64M\nCHAKRA_FLUSH_SIGNAL=usr1\n",
        "bad": "CHAKRA_PROFILE=1\nCHAKRA_TRACE_DIR=/t\nCHAKRA_END_STEP=1\nCHAKRA_RANKS=7-4\n"
               "CHAKRA_PROFLE=1\nOMPI_COMM_WORLD_RANK=x\n",
        "overrides": "CHAKRA_PROFILE=yes\nCHAKRA_TRACE_DIR=/t\nCHAKRA_RANK=3\nPMI_RANK=1\nPMI_SIZE=4\n"
                     "TORCHELASTIC_RESTART_COUNT=2\nCHAKRA_EXIT_TIMEOUT=3600\nCHAKRA_LOG_LEVEL=debug\n",
    }
    for name, text in envs.items():
        write("config", name, text)

    # The preload stub's copy: one entry a line; duplicates, names that
    # almost match, more entries than its fixed slots, more bytes than its
    # arena (both take the heap block).
    stub_envs = {
        "plain": "PATH=/usr/bin:/bin\nHOME=/root\nCHAKRA_PROFILE=1\nCHAKRA_START_STEP=3\nCHAKRA_END_STEP=5\n"
                 "CHAKRA_TRACE_DIR=traces\nRANK=1\nWORLD_SIZE=2\nLOCAL_RANK=1\nSLURM_JOB_ID=42\n"
                 "CHAKRASHIM_CONFIG_SHOWN=1\n",
        "odd": "CHAKRA_PROFILE=1\nCHAKRA_PROFILE=0\nCHAKRA=x\nCHAKRA_\n=CHAKRA_PROFILE\nRANK\nRANKS=3\nRAN=1\n\n"
               "CHAKRA_START_STEP=\n",
        "many": "CHAKRA_PROFILE=1\n" + "".join("CHAKRA_X%d=%d\n" % (i, i) for i in range(70)),
        "long": "CHAKRA_PROFILE=1\nCHAKRA_TRACE_DIR=" + "d/" * 1400 + "\nRANK=0\n",
    }
    for name, text in stub_envs.items():
        write("stub_env", name, text)

    cpu = cb.RankCapture(rank=1, world_size=2, steps=(3,))
    gpu = cb.RankCapture(rank=0, steps=(5,), gpu=True)
    for name, c in (("cpu", cpu), ("gpu", gpu)):
        write("trace_reader", name + ".json", c.device_text())
        write("report", name + ".json", c.device_text())
        write("et_reader", name + ".json", c.et_text())
        write("link", name, c.et_text() + SEP + c.device_text())
        write("check", name, c.et_text() + SEP + c.device_text())
        write("hta_rank_scan", name, "\x07" + c.device_text()[:400])
    cli = os.environ.get("CHAKRASHIM_TEST_CLI", "")
    if cli:
        with tempfile.TemporaryDirectory() as tmp:
            for name, c in (("cpu", cpu), ("gpu", gpu)):
                et, dev, out = (os.path.join(tmp, name + x) for x in (".et.json", ".dev.json", ".plus.json"))
                for path, text in ((et, c.et_text()), (dev, c.device_text())):
                    with open(path, "w") as f:
                        f.write(text)
                subprocess.run([cli, "link", "--host", et, "--device", dev, "--output", out], check=True,
                               capture_output=True)
                with open(out) as f:
                    write("convert", name + ".json", f.read())
    else:
        print("make_seeds: CHAKRASHIM_TEST_CLI not set: the convert seeds are left as they are")
    write("hta_rank_scan", "compact", '\x01{"distributedInfo": {"rank":3}, "x": {"rank": \t 12}}')

    docs = [{"backend": "gloo", "rank": 0, "world_size": 2, "pg_config": [{"ranks": [0, 1]}]},
            {"a": [1, -2, 3.5e10, True, None, "\u00e9\\\"x"], "a ": {}}, [[], {}, [[1]]], 18446744073709551615]
    for i, d in enumerate(docs):
        write("json_capture", "doc%d.json" % i, json.dumps(d))

    for i, n in enumerate(["0_chakra", "123_kineto.4", "rank-3.json", "rank-12.json.gz.partial", "1234.567",
                           "-0.001", "ProfilerStep#12", "cudaLaunchKernel_v7000", "rank-.json"]):
        write("names", "n%d" % i, n)


if __name__ == "__main__":
    main()
