#include "check/format_rules.h"

namespace chakrashim::tools::check {

namespace {
using enum RuleId;
constexpr auto E = Severity::error;
constexpr auto W = Severity::warning;
constexpr auto I = Severity::info;
}  // namespace

// Order follows RuleId; a unit test checks that every entry sits at its own
// index and that the severities match docs/trace-format.md's check table.
const std::array<Rule, kRuleCount> kRules = {{
    {et_json, "et.json", E, "the host ET is valid JSON",
     "regenerate it from the job; Chakra cannot read a damaged ET"},
    {et_finalized, "et.finalized", E, "the host ET has its root node 1 and finish_ts",
     "the capture did not finish; re-run, or check for a crash before the window ended"},
    {et_fields, "et.fields", E, "the host ET has schema, pid, time, start_ts, finish_ts and nodes",
     "chakra_converter needs every one; write the ET with torch's ExecutionTraceObserver"},
    {et_attrs, "et.attrs", E, "every ET node has rf_id, fw_parent, seq_id, scope, tid, fw_tid, op_schema",
     "capture with torch >= 2.5, whose observer writes all seven"},
    {device_json, "device.json", E, "the device trace is valid, complete JSON",
     "the writer did not finish or the file was damaged; re-run the capture"},
    {device_rank, "device.rank", E, "HTA's regex \"rank\":\\s+(\\d+) reads this file's rank",
     "write distributedInfo before traceEvents as \"rank\": R, with a space after the colon"},
    {device_profiler_step, "device.profiler_step", E, "the device trace has a ProfilerStep#N event",
     "chakra_trace_link crashes inside HTA without one; capture at least one whole step"},
    {device_rf_id, "device.rf_id", E, "every cpu_op and user_annotation has a Record function id",
     "without it the link is empty; record the spans with RecordFunction ids on"},
    {join_rf_id, "join.rf_id", E, "ET op nodes find their rf_id as a Record function id (>= 99%)",
     "the two files do not describe the same ops; capture both in the same window"},
    {gpu_external_id, "gpu.external_id", E, "every kernel and gpu_memcpy has an External id",
     "trace_link would hang those GPU ops under the wrong parent; join each to its launch's op"},
    {gpu_launch_name, "gpu.launch_name", E, "launches carry the CUDA API name Chakra knows",
     "strip CUPTI's version suffix (cudaLaunchKernel_v7000 -> cudaLaunchKernel)"},
    {gpu_stream, "gpu.stream", E, "GPU events have stream > 0 and CPU events have no stream",
     "HTA tells GPU from CPU events by stream; write it on kernel/gpu_memcpy/gpu_memset only"},
    {gpu_correlation, "gpu.correlation", E, "launch correlation ids are unique",
     "chakra_trace_link fails on duplicate correlations; keep CUPTI's id per launch"},
    {span_equal, "span.equal", E, "no child span has exactly its parent's start and end",
     "trace_link's exclusive durations fail on it; end the child strictly inside its parent"},
    {steps_match, "steps.match", E, "the ET and the device trace hold the same steps",
     "capture both files over the same window; re-run the capture"},
    {files_partial, "files.partial", E, "no .partial file is left behind",
     "its writer is gone without finishing it (a crash or a kill); re-run, or remove the leftover"},
    {files_unreadable, "files.unreadable", E, "every trace file can be read",
     "give the capture's ETs (JOB_chakra/rank-R.json) and device traces (JOB_kineto/rank-R.json[.gz]), "
     "or their folder, readable by you"},
    {ranks_missing, "ranks.missing", E, "every rank of the world size wrote its files",
     "that rank did not capture; check its log for a [chakrashim rank R] line"},
    {ranks_unpaired, "ranks.unpaired", E, "each rank has both its ET and its device trace",
     "the two folders must hold the same ranks; re-run the capture for that rank"},
    {et_duplicates, "et.duplicates", E, "every ET node id, and every op node's rf_id, appears once",
     "something else wrote into this ET (a forked child flushing its copy of the stream); "
     "re-capture: chakrashim's fork guard keeps children out of it"},
    {join_op_count, "join.op_count", E,
     "the ET's op nodes do not outnumber the device trace's host spans (the files record the same ops)",
     "the ET holds ops its device trace never saw; it is not this device trace's pair, or it "
     "was written into by another process; re-capture"},
    {files_none, "files.none", E, "the folder holds a capture (JOB_chakra/ and JOB_kineto/, or trace files)",
     "give the trace root (CHAKRA_TRACE_DIR) or one run's folder; a job that wrote nothing says why in its log"},
    {pair_mismatch, "pair.mismatch", E, "an ET and a device trace given as one rank's pair are that rank's",
     "give the ET and the device trace of the same rank and run"},
    {steps_profiler_step, "steps.profiler_step", E, "each file holds one ProfilerStep#N per step, in step order",
     "the job's own torch.profiler opens a ProfilerStep#N every step (prof.step(), numbered from where it "
     "started) and the capture kept them beside chakrashim's, so Chakra's linker and HTA take wrong steps; "
     "re-capture with this chakrashim, which writes the job's as job:ProfilerStep#N"},
    {ranks_mixed_runs, "ranks.mixed_runs", E, "every file of one capture comes from one run (launch) of the job",
     "another run wrote into this capture's folders (a chakrashim before 0.13 chose folders rank by rank, or "
     "a run with CHAKRA_OVERWRITE over another's); the ranks listed together are one run: take them "
     "alone, or re-capture"},
    {link_host_only, "link.host_only", W, "the device trace has cuda_runtime events",
     "Chakra's own linker (chakra_trace_link) will refuse this pair (the HTA parser inside it fails "
     "with KeyError 'cuda_runtime'); use chakrashim link. HTA's own GPU breakdowns need GPU events "
     "(docs/report.md)"},
    {et_schema, "et.schema", W, "the ET schema is one chakra_converter accepts",
     "the converter accepts 1.0.2, 1.0.3, 1.1.0 and 1.1.1, each with the -chakra.0.0.4 suffix; capture with torch >= 2.5"},
    {ranks_filtered, "ranks.filtered", W, "ranks absent because of CHAKRA_RANKS",
     "expected with CHAKRA_RANKS; widen it to capture every rank"},
    {steps_partial_last, "steps.partial_last", W, "the metadata flags a partial last step",
     "the window ended inside a step; analyses of that step are incomplete"},
    {device_dropped, "device.dropped", W, "no CUPTI records were dropped",
     "raise CHAKRA_MAX_MEMORY or shorten the window"},
    {device_truncated, "device.truncated", W, "the window was not cut short",
     "the capture stopped early (see the metadata's reason); later steps are missing"},
    {et_parent_missing, "et.parent_missing", W, "every ET node's parent (ctrl_deps) is a node of the file",
     "an op open at the window's edge (a record_function around the whole iteration, another thread's op) "
     "has no node: chakra_converter leaves the nodes under it out; torch's ET observer "
     "(CHAKRA_ET_RECORDER=torch) loses such ops, chakrashim's own recorder (the default) closes them at the edge"},
    {steps_merged, "steps.merged", W, "each captured step holds one iteration of the job's loop",
     "its time is that of several iterations: compare it with the others with care (report labels it), or "
     "capture steps where the GradScaler skipped no optimizer step"},
    {et_gzip, "et.gzip", I, "the ET is plain JSON",
     "chakra_trace_link opens the ET with open(); gunzip it first"},
    {device_header, "device.header", I, "schemaVersion, deviceProperties, distributedInfo precede traceEvents",
     "readers accept any order; only the rank placement matters"},
    {device_no_rank, "device.no_rank", I, "the device trace names its rank",
     "HTA reads rank 0 for a file without one"},
    {device_no_metadata, "device.no_metadata", I, "the device trace has our chakrashim object",
     "not written by chakrashim; the rules that need its metadata are skipped"},
    {gpu_unlinked, "gpu.unlinked", I, "GPU ops are launched by calls Chakra counts",
     "Chakra links only kernels and memcpys launched by the calls it knows"},
    {files_in_progress, "files.in_progress", I, "no trace file is still being written",
     "a window still open, or its files still being written (their writer holds them): check again once the "
     "window has ended"},
}};

const Rule& rule(RuleId id) { return kRules[static_cast<std::size_t>(id)]; }

std::optional<RuleId> rule_by_name(std::string_view name) {
  for (const auto& r : kRules) {
    if (r.name == name) return r.id;
  }
  return std::nullopt;
}

std::string_view severity_name(Severity s) {
  switch (s) {
    case Severity::error: return "error";
    case Severity::warning: return "warning";
    case Severity::info: return "info";
  }
  return "info";
}

}  // namespace chakrashim::tools::check
