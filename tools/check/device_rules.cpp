// device_rules() of rank_rules.h: the device trace on its own.
#include <algorithm>

#include "chakrashim/trace_schema.h"
#include "check/rank_rules.h"
#include "check/step_match.h"

namespace chakrashim::tools::check {

namespace s = chakrashim::schema;

namespace {

std::string count_of(std::uint64_t n, const char* what) {
  return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
}

void tally(const Tally& t, RuleId id, const std::string& path, const char* what,
           std::vector<Finding>& out) {
  if (t.count == 0) return;
  out.push_back({id, path + ": " + count_of(t.count, what) + ", e.g. " + t.example});
}

void header_rules(const DeviceInput& in, std::vector<Finding>& out) {
  const auto& keys = in.summary->keys_before_events;
  std::string missing;
  for (const auto key : {s::kSchemaVersion, s::kDeviceProperties, s::kDistributedInfo}) {
    if (std::find(keys.begin(), keys.end(), key) != keys.end()) continue;
    missing += (missing.empty() ? "" : ", ") + std::string(key);
  }
  if (!missing.empty()) out.push_back({RuleId::device_header, in.path + " has no " + missing + " before traceEvents"});
}

void rank_rules(const DeviceInput& in, std::vector<Finding>& out) {
  if (!in.expected_rank) return;
  const std::uint64_t want = *in.expected_rank;
  if (in.hta_rank) {
    if (*in.hta_rank != want) {
      out.push_back({RuleId::device_rank, in.path + ": HTA's regex reads rank " + std::to_string(*in.hta_rank) +
                                              ", but this file is rank " + std::to_string(want)});
    }
    return;
  }
  const auto& info = in.summary->distributed_info;
  if (info && info->is_object() && info->contains(s::kRank)) {
    out.push_back({RuleId::device_rank, in.path + ": distributedInfo has a rank, but HTA's regex "
                                                  "matches nothing (\"rank\": without a space?), so HTA "
                                                  "silently reads rank 0 for every file"});
  } else if (want != 0) {
    out.push_back({RuleId::device_rank, in.path + " names no rank, so HTA reads rank 0; this file is rank " +
                                            std::to_string(want)});
  } else {
    out.push_back({RuleId::device_no_rank, in.path + " names no rank (no distributedInfo)"});
  }
}

void gpu_rules(const DeviceInput& in, std::vector<Finding>& out) {
  const DeviceFacts& f = *in.facts;
  tally(f.gpu_missing_external_id, RuleId::gpu_external_id, in.path, "kernel/memcpy without External id", out);
  tally(f.launch_suffix, RuleId::gpu_launch_name, in.path, "launch with a version suffix", out);
  tally(f.gpu_bad_stream, RuleId::gpu_stream, in.path, "GPU event without stream > 0", out);
  tally(f.cpu_with_stream, RuleId::gpu_stream, in.path, "CPU-side event with a stream key", out);
  if (f.duplicate_correlations > 0) {
    out.push_back({RuleId::gpu_correlation, in.path + ": " + count_of(f.duplicate_correlations, "duplicate launch correlation") +
                                                ", e.g. " + f.duplicate_correlation_example});
  }
  if (f.gpu_ops_unlinked > 0) {
    out.push_back({RuleId::gpu_unlinked, in.path + ": " + count_of(f.gpu_ops_unlinked, "kernel/memcpy") +
                                             " without a launch Chakra counts"});
  }
}

void meta_rules(const DeviceInput& in, const std::optional<CaptureMeta>& meta, std::vector<Finding>& out) {
  if (!meta) {
    out.push_back({RuleId::device_no_metadata, in.path + " has no chakrashim object"});
    return;
  }
  if (meta->partial_last_step) {
    out.push_back({RuleId::steps_partial_last, in.path + ": step " + std::to_string(*meta->partial_last_step) +
                                                   " is partial (reason: " + meta->reason + ")"});
  }
  for (const auto& m : meta->merged) {
    out.push_back({RuleId::steps_merged,
                   in.path + ": step " + std::to_string(m.step) + " holds " + std::to_string(m.iterations) +
                       " iterations" +
                       (m.why == s::kMergedGradScaler
                            ? ": a GradScaler skipped the optimizer step of " + std::to_string(m.iterations - 1) +
                                  " of them (inf or nan gradients), so their work counts as one step"
                            : " (" + m.why + ")")});
  }
  if (meta->dropped_records > 0) {
    out.push_back({RuleId::device_dropped, in.path + ": " + count_of(meta->dropped_records, "CUPTI record") + " dropped"});
  }
  if (meta->truncated || meta->cut_short) {
    out.push_back({RuleId::device_truncated, in.path + ": the window was cut short (reason: " + meta->reason +
                                                 (meta->truncated ? ", truncated_at set" : "") + ")"});
  }
}

}  // namespace

void device_rules(const DeviceInput& in, const std::optional<CaptureMeta>& meta, RankFigures& figures,
                  std::vector<Finding>& out) {
  if (!in.read_error.empty()) {
    out.push_back({RuleId::files_unreadable, in.path + ": " + in.read_error});
    return;
  }
  const TraceSummary& sum = *in.summary;
  const DeviceFacts& f = *in.facts;
  figures.events = sum.events;
  if (!sum.parse.ok) {
    out.push_back({RuleId::device_json, in.path + (sum.parse.truncated ? " ends early, after " + count_of(sum.events, "event")
                                                                      : " is not valid JSON") +
                                            " (" + sum.parse.error + ")"});
    return;
  }
  if (!sum.has_trace_events) {
    out.push_back({RuleId::device_json, in.path + " has no traceEvents array"});
    return;
  }
  figures.gpu_ops = f.gpu_ops();
  figures.host_only = f.cuda_runtime == 0;
  std::vector<std::uint64_t> steps;
  for (const auto& st : f.steps) steps.push_back(st.step);
  std::sort(steps.begin(), steps.end());
  steps.erase(std::unique(steps.begin(), steps.end()), steps.end());
  figures.steps_device = steps;
  header_rules(in, out);
  rank_rules(in, out);
  if (f.steps.empty()) out.push_back({RuleId::device_profiler_step, in.path + " has no ProfilerStep#N event"});
  if (const auto problem = step_order_problem(f.steps_by_time()); !problem.empty())
    out.push_back({RuleId::steps_profiler_step, in.path + ": ProfilerStep#N by start time " + problem});
  tally(f.missing_rf_id, RuleId::device_rf_id, in.path, "cpu_op/user_annotation without Record function id", out);
  gpu_rules(in, out);
  if (f.equal_spans > 0) {
    out.push_back({RuleId::span_equal, in.path + ": " + count_of(f.equal_spans, "child") +
                                           " with exactly its parent's start and end, e.g. " + f.equal_span_example});
  }
  // A CPU-only process has no CUDA calls to record: that is a note, so that
  // --strict passes CPU captures. Where CUDA was there, no launch recorded
  // is worth a warning.
  figures.had_cuda = sum.devices > 0 || (meta && meta->cupti && *meta->cupti != "absent" && *meta->cupti != "disabled");
  if (figures.host_only) {
    if (figures.had_cuda) {
      out.push_back({RuleId::link_host_only, in.path + " has no cuda_runtime event though the process had CUDA"});
    } else {
      out.push_back({RuleId::link_host_only, in.path + " has no cuda_runtime event (no CUDA in the process: a CPU capture)",
                     Severity::info});
    }
  }
  meta_rules(in, meta, out);
}

}  // namespace chakrashim::tools::check
