// One rank's report: streams its device trace into an EventTable, then
// computes the host and GPU figures (and, for the rank the page shows, one
// step's timeline). This is the one place in report/ that opens trace files.
#pragma once

#include <atomic>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/capture_scan.h"
#include "report/gpu_stats.h"
#include "report/module_totals.h"
#include "report/step_phases.h"
#include "report/step_stats.h"
#include "report/timeline.h"

namespace chakrashim::tools::report {

struct NamedOp {
  std::string name;
  OpTotal totals;
};

struct RankStats {
  std::string group;
  std::uint64_t rank = 0;
  std::string device_path;  // as displayed
  std::string error;        // set when the trace could not be read whole
  std::uint64_t events = 0;
  std::optional<nlohmann::json> meta;  // the chakrashim object
  std::optional<std::int64_t> base_time_ns;  // baseTimeNanoseconds
  std::vector<StepTime> steps;
  std::vector<PhaseTimes> phases;  // per step, as `steps` (step_phases.h)
  std::vector<CollectiveSpan> collectives;  // the stepping thread's, by start
  StepSummary summary;
  std::vector<NamedOp> ops;  // by self time, at most RankOptions::keep_ops
  std::vector<std::pair<std::string, ScopeTotal>> scopes;  // record_function scopes, by total time (as ops)
  // "nn.Module: " scopes (CHAKRA_MODULE_SCOPES), by total time, the
  // prefix taken off the name (module_totals.h).
  std::vector<std::pair<std::string, ModuleTotal>> modules;
  std::int64_t ops_self_ns = 0;  // all ops' self time, all threads
  std::optional<GpuStats> gpu;   // only on traces with GPU ops
  std::optional<Timeline> timeline;
};

struct RankOptions {
  std::string display_root;
  std::size_t keep_ops = 100;
  bool want_timeline = false;
  std::optional<std::uint64_t> timeline_step;  // default: the median step
  std::size_t timeline_max_bars = 4000;
};

// `progress` (may be null) receives the on-disk bytes consumed.
RankStats report_rank(const std::string& group, const RankFiles& files, const RankOptions& options,
                      std::atomic<std::uint64_t>* progress);

// The step a timeline shows by default: the complete step of median
// duration (the earlier one of two middles), so it is a typical step.
//   durations {3: 10, 4: 30, 5: 20} -> 5
std::optional<std::uint64_t> median_step(const std::vector<StepTime>& steps);

}  // namespace chakrashim::tools::report
