#include "link/link_runner.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <istream>

#include "files/byte_stream.h"
#include "common/capture_scan.h"
#include "common/chunk_pipe.h"
#include "common/et_reader.h"
#include "common/missing_ranks.h"
#include "check/device_facts.h"
#include "common/run_mix.h"
#include "common/pair_identity.h"
#include "common/rank_totals.h"
#include "common/tool_schema.h"
#include "common/trace_reader.h"
#include "files/publish.h"
#include "link/et_plus_writer.h"
#include "link/partial_step.h"
#include "files/gzip_sink.h"

namespace chakrashim::tools::link {

namespace fs = std::filesystem;

namespace {

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string parse_problem(const std::string& path, const files::ByteStream& stream, const ParseOutcome& parse) {
  if (!stream.ok()) return path + ": " + stream.error();
  return path + (parse.truncated ? ": ends early (an unfinished file?): " : ": invalid JSON: ") + parse.error;
}

// What the two inputs say about whose they are (pair_identity.h).
struct Identity {
  PairIdentity pair;
};

// Each input is what its option says: a device trace given as the ET would
// "link" into a Kineto trace that later reads as an ET+.
bool kinds_match(const RankJob& job, RankResult& out) {
  const FileKind host = sniff_kind(job.host_path), device = sniff_kind(job.device_path);
  if (host == FileKind::device && device == FileKind::host) {
    out.error = "the inputs are swapped: " + job.host_path + " is a device trace and " + job.device_path +
                " is an ET (--host takes the ET, --device the device trace)";
  } else if (host == FileKind::device) {
    out.error = job.host_path + " is a device trace, not a host ET (--host takes the ET)";
  } else if (device == FileKind::host) {
    out.error = job.device_path + " is a host ET, not a device trace (--device takes the device trace)";
  }
  return out.error.empty();
}

// First pass over the ET: three numbers per node.
bool read_host(const RankJob& job, std::vector<HostNode>& nodes, RankResult& out, Identity& id) {
  files::ByteStream stream(job.host_path);
  if (!stream.ok()) {
    out.error = job.host_path + ": " + stream.error();
    return false;
  }
  std::istream in(&stream);
  const EtSummary summary = read_execution_trace(in, [&nodes](const EtNode& n) {
    if (n.id) nodes.push_back({*n.id, n.parent, n.rf_id});
  });
  if (!summary.parse.ok || !stream.ok()) {
    out.error = parse_problem(job.host_path, stream, summary.parse);
    return false;
  }
  note_et(id.pair, job.host_path, summary);
  if (summary.nodes != nodes.size()) {
    out.error = job.host_path + ": " + std::to_string(summary.nodes - nodes.size()) + " node(s) without an integer id";
    return false;
  }
  const auto& ok = names::kLinkerSchemas;
  if (!summary.schema || std::find(ok.begin(), ok.end(), *summary.schema) == ok.end()) {
    out.warnings.push_back("ET schema '" + summary.schema.value_or("") +
                           "' is not one chakra_trace_link accepts; linked anyway");
  }
  return true;
}

// Each ProfilerStep#N's step, start and length, in file order.
using StepSpans = std::vector<std::pair<std::uint64_t, std::pair<std::int64_t, std::int64_t>>>;

void note_step_span(const TraceEvent& e, StepSpans& steps) {
  if (e.cat != "user_annotation" || !e.ts_ns) return;
  if (const auto step = check::profiler_step_number(e.name)) steps.push_back({*step, {*e.ts_ns, e.dur_ns.value_or(0)}});
}

// The partial last step the device trace's metadata names, and where its
// ProfilerStep#N starts; nullopt when there is none (or no such span).
struct PartialStep {
  std::uint64_t step = 0;
  std::int64_t ts = 0, dur = 0;
  std::string reason;
};

std::optional<PartialStep> partial_step_of(const TraceSummary& summary,
                                           const StepSpans& spans) {
  if (!summary.chakrashim || !summary.chakrashim->is_object()) return std::nullopt;
  const auto steps = summary.chakrashim->find("steps");
  if (steps == summary.chakrashim->end() || !steps->is_object()) return std::nullopt;
  const auto partial = steps->find("partial_last_step");
  if (partial == steps->end() || !partial->is_number_unsigned()) return std::nullopt;
  PartialStep out;
  out.step = partial->get<std::uint64_t>();
  if (const auto r = steps->find("reason"); r != steps->end() && r->is_string()) out.reason = r->get<std::string>();
  for (const auto& [step, span] : spans)
    if (step == out.step) {
      out.ts = span.first;
      out.dur = span.second;
      return out;
    }
  return std::nullopt;
}

// The ProfilerStep#N spans' total, less the step left out (if any).
void note_window(const StepSpans& spans,
                 std::optional<std::uint64_t> left_out, RankResult& out) {
  for (const auto& [step, span] : spans) {
    if (left_out && step == *left_out) continue;
    out.window_ns += span.second;
    ++out.window_steps;
  }
}

bool read_device(const RankJob& job, DeviceOps& device, RankResult& out, Identity& id,
                 std::optional<PartialStep>& partial) {
  files::ByteStream stream(job.device_path);
  if (!stream.ok()) {
    out.error = job.device_path + ": " + stream.error();
    return false;
  }
  std::istream in(&stream);
  DeviceOpsBuilder builder;
  // Each ProfilerStep#N's start and length: the partial step's is the cut.
  StepSpans steps;
  const TraceSummary summary = read_device_trace(in, [&builder, &id, &steps](const TraceEvent& e) {
    note_device_event(id.pair, e);
    builder.add(e);
    note_step_span(e, steps);
  });
  if (!summary.parse.ok || !stream.ok()) {
    out.error = parse_problem(job.device_path, stream, summary.parse);
    return false;
  }
  note_device(id.pair, summary);
  device = std::move(builder).finish();
  partial = partial_step_of(summary, steps);
  note_window(steps, partial && !job.keep_partial_step ? std::optional<std::uint64_t>(partial->step) : std::nullopt,
              out);
  return true;
}

// Two files that clearly are not one rank's would link "fine" into nonsense.
bool same_rank(const std::vector<HostNode>& host, const DeviceOps& device, const RankJob& job, Identity& id,
               RankResult& out) {
  std::vector<std::int64_t> rf_ids;
  for (const auto& op : device.cpu)
    if (op.rf_id) rf_ids.push_back(*op.rf_id);
  std::sort(rf_ids.begin(), rf_ids.end());
  for (const auto& n : host) {
    if (!n.rf_id || *n.rf_id == 0) continue;  // thread and root nodes carry 0
    ++id.pair.et_rf_ids;
    id.pair.et_rf_ids_found += std::binary_search(rf_ids.begin(), rf_ids.end(), static_cast<std::int64_t>(*n.rf_id));
  }
  out.error = not_one_pair(job.host_path, job.device_path, id.pair);
  return out.error.empty();
}

bool write_output(const RankJob& job, const LinkPlan& plan, const DeviceOps& device, RankResult& out) {
  const fs::path target(job.output_path);
  const std::string dir = target.has_parent_path() ? target.parent_path().string() : std::string(".");
  if (const auto made = files::make_dirs(dir); !made.ok) {
    out.error = made.error;
    return false;
  }
  WriteOutcome written;
  const auto produce = [&](files::ByteSink& file) {
    files::ByteStream stream(job.host_path);
    if (!stream.ok()) {
      written.error = job.host_path + ": " + stream.error();
      return false;
    }
    std::istream in(&stream);
    // The uncompressed ET+ also goes to job.tee when set (convert's reader).
    const auto write_into = [&](files::ByteSink& sink) {
      if (job.tee == nullptr) return write_et_plus(in, plan, device, sink, dir);
      TeeSink both(sink, *job.tee);
      return write_et_plus(in, plan, device, both, dir);
    };
    if (!job.gzip) {
      written = write_into(file);
      return written.ok;
    }
    files::GzipSink gz(file);
    written = write_into(gz);
    return written.ok && gz.finish();
  };
  // No re-read to validate: the writer checked every write, and parsing the
  // output again would double the cost of the largest step. Like
  // chakra_trace_link, an existing output is replaced.
  const auto published = files::publish_file(job.output_path, produce, nullptr, true);
  out.nodes_written = written.nodes_written;
  if (!published.ok) {
    out.error = written.error.empty() ? published.error : written.error;
    return false;
  }
  return true;
}

void add_warnings(const LinkPlan& plan, RankResult& out) {
  const LinkStats& s = plan.stats;
  if (s.reachable == 0) out.warnings.push_back("the ET has no root node 1: no node was timed");
  if (s.timed == 0 && s.reachable > 0)
    out.warnings.push_back("no ET rf_id matched a Record function id: no node was timed");
  if (s.gpu_unlinked > 0) {
    out.warnings.push_back(std::to_string(s.gpu_unlinked) + " of " + std::to_string(s.gpu_ops) +
                           " GPU ops under no host node (" + std::to_string(s.gpu_no_launch) + " without a launch, " +
                           std::to_string(s.gpu_no_parent) + " without a CPU op before their launch)");
  }
}

}  // namespace

RankPlan plan_rank(const RankJob& job) {
  const auto start = std::chrono::steady_clock::now();
  RankPlan out;
  RankResult& r = out.result;
  r.rank = job.rank;
  r.output_path = job.output_path;
  std::vector<HostNode> host;
  Identity id;
  std::optional<PartialStep> partial;
  if (kinds_match(job, r) && read_host(job, host, r, id) && read_device(job, out.device, r, id, partial) &&
      same_rank(host, out.device, job, id, r)) {
    std::optional<PartialCut> cut;
    if (partial && !job.keep_partial_step) {
      cut = cut_partial_step(partial->ts, host, out.device);
      r.left_out = LeftOutStep{partial->step, partial->reason, partial->dur, cut->host_nodes, cut->gpu_ops};
    }
    out.plan = link_et_plus(host, out.device, cut ? &cut->host_dropped : nullptr);
    r.stats = out.plan.stats;
    if (!out.plan.error.empty()) {
      r.error = out.plan.error;
    } else {
      // The plan holds what a writer needs of these: free them.
      out.device.cpu = {};
      out.device.launches = {};
      r.ok = true;
      add_warnings(out.plan, r);
    }
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

std::optional<CapturedWindow> captured_window(const std::string& device_path, bool keep_partial_step) {
  files::ByteStream stream(device_path);
  if (!stream.ok()) return std::nullopt;
  std::istream in(&stream);
  StepSpans steps;
  const TraceSummary summary = read_device_trace(in, [&steps](const TraceEvent& e) { note_step_span(e, steps); });
  if (!summary.parse.ok || !stream.ok()) return std::nullopt;
  const auto partial = partial_step_of(summary, steps);
  RankResult r;
  note_window(steps, partial && !keep_partial_step ? std::optional<std::uint64_t>(partial->step) : std::nullopt, r);
  return CapturedWindow{r.window_ns, r.window_steps};
}

RankResult link_rank(const RankJob& given) {
  const auto start = std::chrono::steady_clock::now();
  RankJob job = given;
  job.gzip = job.gzip || ends_with(job.output_path, ".gz");
  RankPlan planned = plan_rank(job);
  RankResult out = std::move(planned.result);
  if (out.ok) {
    out.ok = write_output(job, planned.plan, planned.device, out);
    if (!out.ok) out.warnings.clear();
  }
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

std::string left_out_line(const std::vector<RankResult>& results) {
  std::vector<std::pair<std::uint64_t, LeftOutStep>> ranks;
  for (const auto& r : results)
    if (r.ok && r.left_out) ranks.emplace_back(r.rank, *r.left_out);
  return left_out_line(ranks);
}

std::string left_out_line(const std::vector<std::pair<std::uint64_t, LeftOutStep>>& left) {
  std::vector<std::uint64_t> ranks, steps;
  const LeftOutStep* first = nullptr;
  for (const auto& [rank, l] : left) {
    if (first == nullptr) first = &l;
    ranks.push_back(rank);
    if (std::find(steps.begin(), steps.end(), l.step) == steps.end()) steps.push_back(l.step);
  }
  if (first == nullptr) return {};
  std::sort(ranks.begin(), ranks.end());
  std::sort(steps.begin(), steps.end());
  char ms[32];
  std::snprintf(ms, sizeof ms, "%.1f ms", static_cast<double>(first->dur_ns) / 1e6);
  const std::uint64_t first_rank = left.front().first;
  const std::string what = steps.size() == 1 ? "the partial step " + std::to_string(steps[0])
                                             : "the partial steps " + rank_ranges(steps);
  return what + " at the window's end (" + (first->reason.empty() ? "cut" : first->reason) + "; " + ms + " on rank " +
         std::to_string(first_rank) + ") is left out of " + (ranks.size() == 1 ? "rank " : "ranks ") +
         rank_ranges(ranks) +
         ": it holds what ran as the window ended, not a whole training step; --keep-partial-step keeps it";
}

CapturePlan plan_capture(const std::string& dir, const std::string& output_dir, bool gzip, bool keep_partial_step) {
  CapturePlan plan;
  const ScanResult scan = scan_capture(dir);
  if (!scan.error.empty()) {
    plan.error = dir + ": " + scan.error;
    return plan;
  }
  if (!output_dir.empty() && scan.groups.size() > 1) {
    plan.error = dir + " holds " + std::to_string(scan.groups.size()) +
                 " runs; --output-dir takes one: give one run's folder";
    return plan;
  }
  const std::string file_name_suffix = gzip ? ".json.gz" : ".json";
  for (const CaptureGroup& g : scan.groups) {
    // Two runs' files are no one capture: linked or converted together,
    // they pass for one job's ranks (issue #49).
    if (std::string mixed = mixed_runs_line(g); !mixed.empty()) {
      plan.error = mixed + "; `chakrashim check` says more: give one run's files";
      plan.jobs.clear();
      return plan;
    }
    if (std::string missing = missing_ranks_line(g); !missing.empty()) plan.warnings.push_back(std::move(missing));
    std::string out_dir = output_dir;
    if (out_dir.empty()) {
      const fs::path host_dir(g.host_dir.empty() ? g.device_dir : g.host_dir);
      // JOB_chakra[.i] -> JOB_linked[.i] beside it, named from the folder
      // (a window's group label is "step-S/JOB[.i]").
      const auto folder = parse_folder_name(host_dir.filename().string());
      if (g.label.empty() || !folder) {
        out_dir = (fs::path(dir) / "linked").string();
      } else {
        out_dir = (host_dir.parent_path() / (folder->job + "_linked" +
                                             (folder->index ? "." + std::to_string(folder->index) : std::string())))
                      .string();
      }
    }
    for (const RankFiles& r : g.ranks) {
      if (!r.host_path || !r.device_path) {
        plan.skipped.push_back("rank " + std::to_string(r.rank) + (g.label.empty() ? "" : " (run " + g.label + ")") +
                               ": no " + (r.host_path ? "device trace" : "host ET") + "; not linked");
        continue;
      }
      plan.jobs.push_back({r.rank, *r.host_path, *r.device_path,
                           (fs::path(out_dir) / ("rank-" + std::to_string(r.rank) + file_name_suffix)).string(),
                           gzip, nullptr, keep_partial_step});
    }
  }
  if (plan.jobs.empty() && plan.error.empty()) plan.error = dir + ": no rank has both a host ET and a device trace";
  return plan;
}

std::string totals_line(const std::vector<RankResult>& results, double seconds) {
  RankTotals totals{"link", "linked", 0, 0, {}, "ET+", {}};
  std::uint64_t gpu = 0;
  for (const auto& r : results) {
    if (!r.ok) {
      ++totals.failed;
      continue;
    }
    ++totals.done;
    gpu += r.stats.gpu_ops - r.stats.gpu_unlinked;
    totals.add_output(r.output_path);
  }
  totals.figures.push_back(std::to_string(gpu) + " GPU ops linked");
  return tools::totals_line(totals, seconds);
}

std::string summary_line(const RankResult& r) {
  const std::string who = "rank " + std::to_string(r.rank) + ": ";
  if (!r.ok) return who + "error: " + r.error;
  const LinkStats& s = r.stats;
  char time[32];
  std::snprintf(time, sizeof time, "%.2f s", r.seconds);
  std::string line = who + std::to_string(s.host_nodes) + " host nodes (" + std::to_string(s.timed) + " timed), ";
  if (s.gpu_ops == 0 && s.memsets == 0) {
    line += "host-only device trace";
  } else {
    line += std::to_string(s.gpu_ops - s.gpu_unlinked) + "/" + std::to_string(s.gpu_ops) + " GPU ops linked (" +
            std::to_string(s.gpu_children) + " child nodes)";
    if (s.memsets > 0) line += ", " + std::to_string(s.memsets) + " memsets not linked (as Chakra)";
  }
  return line + " -> " + r.output_path + " (" + time + ")";
}

}  // namespace chakrashim::tools::link
