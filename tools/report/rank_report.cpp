#include "report/rank_report.h"

#include <algorithm>
#include <istream>

#include "check/rank_check.h"
#include "files/byte_stream.h"
#include "common/trace_reader.h"
#include "report/event_table.h"

namespace chakrashim::tools::report {

namespace {

std::optional<std::uint64_t> partial_step_of(const std::optional<nlohmann::json>& meta) {
  if (!meta || !meta->is_object()) return std::nullopt;
  const auto steps = meta->find("steps");
  if (steps == meta->end() || !steps->is_object()) return std::nullopt;
  const auto partial = steps->find("partial_last_step");
  if (partial == steps->end() || !partial->is_number_unsigned()) return std::nullopt;
  return partial->get<std::uint64_t>();
}

void add_timeline(const EventTable& table, const RankOptions& options, RankStats& out) {
  const auto wanted = options.timeline_step ? options.timeline_step : median_step(out.steps);
  if (!wanted) return;
  for (const auto& s : unique_steps(table.steps)) {
    if (s.step == *wanted) {
      out.timeline = build_timeline(table, s, options.timeline_max_bars);
      return;
    }
  }
}

}  // namespace

// The metadata's steps that hold several iterations, onto `steps`; true if
// any did.
bool mark_merged_steps(const std::optional<nlohmann::json>& meta, std::vector<StepTime>& steps) {
  if (!meta || !meta->is_object()) return false;
  const auto st = meta->find("steps");
  if (st == meta->end() || !st->is_object()) return false;
  const auto merged = st->find("merged");
  if (merged == st->end() || !merged->is_array()) return false;
  bool any = false;
  for (const auto& m : *merged) {
    if (!m.is_object() || !m.contains("step") || !m.contains("iterations") || !m["step"].is_number_unsigned() ||
        !m["iterations"].is_number_unsigned())
      continue;
    for (auto& s : steps)
      if (s.step == m["step"].get<std::uint64_t>()) {
        s.iterations = m["iterations"].get<std::uint64_t>();
        any = true;
      }
  }
  return any;
}

std::optional<std::uint64_t> median_step(const std::vector<StepTime>& steps) {
  std::vector<const StepTime*> complete;
  for (const auto& s : steps)
    if (counted_step(s)) complete.push_back(&s);
  if (complete.empty())
    for (const auto& s : steps) complete.push_back(&s);
  if (complete.empty()) return std::nullopt;
  std::stable_sort(complete.begin(), complete.end(),
                   [](const StepTime* a, const StepTime* b) { return a->dur_ns < b->dur_ns; });
  return complete[(complete.size() - 1) / 2]->step;
}

RankStats report_rank(const std::string& group, const RankFiles& files, const RankOptions& options,
                      std::atomic<std::uint64_t>* progress) {
  RankStats out;
  out.group = group;
  out.rank = files.rank;
  if (!files.device_path) {
    out.error = "no device trace (only the ET): the report needs the device trace's times";
    return out;
  }
  out.device_path = check::display_path(*files.device_path, options.display_root);
  EventTable table;
  files::ByteStream stream(*files.device_path, [progress, last = std::uint64_t{0}](std::string_view, std::uint64_t pos) mutable {
    if (progress != nullptr && pos > last) progress->fetch_add(pos - last, std::memory_order_relaxed);
    last = pos;
  });
  if (!stream.ok()) {
    out.error = stream.error();
    return out;
  }
  std::istream is(&stream);
  const TraceSummary summary = read_device_trace(is, [&table](const TraceEvent& e) { table.add(e); });
  if (!summary.parse.ok) {
    out.error = !stream.error().empty() ? stream.error()
                : summary.parse.truncated ? "the file ends early (not finished by its writer)"
                                          : summary.parse.error;
    return out;
  }
  out.events = summary.events;
  out.meta = summary.chakrashim;
  out.base_time_ns = summary.base_time_ns;

  HostStats host = host_stats(table, partial_step_of(out.meta));
  out.steps = std::move(host.steps);
  // Step 0 is the job's setup only where chakrashim counted the steps.
  for (auto& st : out.steps) st.setup = st.step == 0 && out.meta.has_value();
  mark_merged_steps(out.meta, out.steps);
  host.summary = summarize(out.steps);
  StepPhases phases = step_phases(table, unique_steps(table.steps));
  out.phases = std::move(phases.per_step);
  out.collectives = std::move(phases.collectives);
  out.summary = host.summary;
  for (const auto& op : host.ops) out.ops_self_ns += op.self_ns;
  const std::size_t keep = std::min(options.keep_ops, host.ops.size());
  for (std::size_t i = 0; i < keep; ++i) out.ops.push_back({table.names[host.ops[i].name], host.ops[i]});
  const std::vector<ScopeTotal> scopes = scope_totals(table);
  for (std::size_t i = 0; i < scopes.size() && i < options.keep_ops; ++i)
    out.scopes.emplace_back(table.names[scopes[i].name], scopes[i]);
  const std::vector<ModuleTotal> modules = module_totals(table);
  for (std::size_t i = 0; i < modules.size() && i < options.keep_ops; ++i)
    out.modules.emplace_back(table.names[modules[i].name].substr(kModulePrefix.size()), modules[i]);

  if (!table.gpu.empty()) {
    std::int64_t start = 0, end = 0;
    if (!out.steps.empty()) {
      start = out.steps.front().start_ns;
      for (const auto& s : out.steps) end = std::max(end, s.start_ns + s.dur_ns);
    } else {
      // No steps: the GPU ops' own span is the only window there is.
      start = std::min_element(table.gpu.begin(), table.gpu.end(), [](auto& a, auto& b) { return a.start < b.start; })->start;
      end = std::max_element(table.gpu.begin(), table.gpu.end(), [](auto& a, auto& b) { return a.end < b.end; })->end;
    }
    out.gpu = gpu_stats(table, start, end);
  }
  if (options.want_timeline) add_timeline(table, options, out);
  return out;
}

}  // namespace chakrashim::tools::report
