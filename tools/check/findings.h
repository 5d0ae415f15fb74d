// What checking one rank (or one capture) produces: findings, each naming a
// rule with its own detail, and the figures the summary prints.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "check/format_rules.h"

namespace chakrashim::tools::check {

struct Finding {
  RuleId rule;
  std::string detail;  // what was found, with file and example; no fix
  // Set where the same rule weighs differently in context: link.host_only
  // is a note for a process that had no CUDA, a warning for one that had.
  std::optional<Severity> severity = std::nullopt;
};

inline Severity severity_of(const Finding& f) { return f.severity ? *f.severity : rule(f.rule).severity; }

struct RankFigures {
  std::optional<std::string> et_schema;
  std::uint64_t et_nodes = 0, et_op_nodes = 0;
  std::uint64_t events = 0, gpu_ops = 0;
  bool host_only = false;
  bool had_cuda = false;  // deviceProperties lists a GPU, or CUPTI was there
  std::optional<std::vector<std::uint64_t>> steps_et, steps_device;
  std::optional<std::uint64_t> join_matched, join_total;  // rf_id join coverage
};

// Read from the device trace's chakrashim object; the capture-level rules
// (missing and filtered ranks, unpaired files) need it.
struct CaptureMeta {
  std::optional<std::uint64_t> world_size;
  std::optional<std::string> run;  // the launch's id (ranks.run), if written
  std::optional<std::string> ranks_filter;
  std::optional<std::string> host_trace;  // "on", "off", or why it was skipped
  std::optional<std::string> cupti;       // "ok", "absent" (no CUDA), "disabled", ...
  std::optional<std::uint64_t> partial_last_step;
  std::vector<std::uint64_t> captured;
  bool cut_short = false;
  std::string reason;
  std::uint64_t dropped_records = 0;
  bool truncated = false;  // truncated_at is set
  // Steps that hold more than one iteration (step, iterations, why).
  struct Merged {
    std::uint64_t step = 0, iterations = 0;
    std::string why;
  };
  std::vector<Merged> merged;
};

struct RankReport {
  std::string group;  // the run's label ("JOB" or "JOB.i"), empty for loose files
  std::optional<std::uint64_t> rank;  // nullopt: capture-wide findings
  std::optional<std::string> host_path, device_path;
  std::vector<Finding> findings;
  RankFigures figures;
  std::optional<CaptureMeta> meta;
  // The world size the ET's process-group node records: the missing-rank
  // rule's fallback when no device trace carries the metadata
  // (CHAKRA_DEVICE_TRACE=0).
  std::optional<std::uint64_t> et_world_size;
  // What the ET's own metadata says of the window's device trace ("on",
  // "off"): chakrashim's ETs say it, torch's do not (issue #49).
  std::optional<std::string> et_device_trace;
  // The run and world size the ET's chakrashim object names (issue #49).
  std::optional<std::string> et_run;
  std::optional<std::uint64_t> et_meta_world_size;
};

}  // namespace chakrashim::tools::check
