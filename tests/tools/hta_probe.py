"""Runs Holistic Trace Analysis 0.5.0 on one device-trace folder and prints
what each analysis answered, as one JSON object on stdout, for
tests/tools/test_hta.py to check against the files.

It runs under HTA's own interpreter (the virtual environment that
scripts/setup.sh makes, .deps/hta), never the job's: HTA's packages stay out
of the Python that runs our tests and jobs. An analysis that raises is
recorded as {"error": "Type: message"}, so the test can say which analysis
fails on which capture, and a change in HTA's behaviour shows.

    hta_probe.py TRACE_DIR [OTHER_TRACE_DIR]

OTHER_TRACE_DIR: a second run of the same job, for the trace diff.
"""
import json
import logging
import sys
import warnings


def frame(df):
    """A DataFrame as a list of rows (dicts of plain values)."""
    return json.loads(df.to_json(orient="records"))


def attempt(fn):
    try:
        return fn()
    except Exception as e:  # noqa: BLE001 - what HTA raised is the result
        return {"error": f"{type(e).__name__}: {e}"}


def main():
    warnings.simplefilter("ignore")
    logging.disable(logging.WARNING)
    from hta.trace_analysis import TraceAnalysis
    from hta.trace_diff import LabeledTrace, TraceDiff

    trace_dir = sys.argv[1]
    other = sys.argv[2] if len(sys.argv) > 2 else trace_dir
    # Every captured step: HTA leaves the last one out by default.
    a = TraceAnalysis(trace_dir=trace_dir, include_last_profiler_step=True)
    out = {"steps": [int(s) for s in a.get_profiler_steps()]}
    out["temporal"] = attempt(lambda: frame(a.get_temporal_breakdown(visualize=False)))
    out["idle"] = attempt(lambda: frame(a.get_idle_time_breakdown(visualize=False)[0]))
    out["kernel"] = attempt(lambda: dict(zip(
        ("types", "kernels"), map(frame, a.get_gpu_kernel_breakdown(visualize=False)))))
    out["comm_comp"] = attempt(lambda: frame(a.get_comm_comp_overlap(visualize=False)))
    out["launch"] = attempt(lambda: {str(rank): frame(df) for rank, df in
                                     a.get_cuda_kernel_launch_stats(visualize=False).items()})
    # The cpu_ops' input shapes and types as HTA parsed them, by External id.
    df = a.t.get_trace(a.t.get_ranks()[0])
    shaped = df[df["input_dims"].map(lambda v: isinstance(v, list))]
    out["inputs"] = {str(int(r.external_id)): [r.input_dims, r.input_type] for r in shaped.itertuples()}
    # The trace diff's op counts: every op and kernel of the first step, and
    # two runs compared.
    t = LabeledTrace(label="run", trace_dir=trace_dir)
    out["ops"] = attempt(lambda: frame(t.get_ops_summary(t.extract_ops()).reset_index()))
    out["diff"] = attempt(lambda: frame(TraceDiff.compare_traces(
        LabeledTrace(label="a", trace_dir=trace_dir),
        LabeledTrace(label="b", trace_dir=other)).reset_index()))
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
