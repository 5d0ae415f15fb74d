// docs/trace-format.md as data: every rule `chakrashim check` applies, with its
// severity (errors and warnings exactly as docs/trace-format.md divides them), a
// one-line description and the fix printed after each finding.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

namespace chakrashim::tools::check {

enum class Severity : std::uint8_t { error, warning, info };

enum class RuleId : std::uint8_t {
  // errors
  et_json, et_finalized, et_fields, et_attrs,
  device_json, device_rank, device_profiler_step, device_rf_id,
  join_rf_id, gpu_external_id, gpu_launch_name, gpu_stream, gpu_correlation,
  span_equal, steps_match, files_partial, files_unreadable, ranks_missing, ranks_unpaired,
  et_duplicates, join_op_count, files_none, pair_mismatch, steps_profiler_step, ranks_mixed_runs,
  // warnings
  link_host_only, et_schema, ranks_filtered, steps_partial_last, device_dropped,
  device_truncated, et_parent_missing, steps_merged,
  // information: printed, never changes the exit status
  et_gzip, device_header, device_no_rank, device_no_metadata, gpu_unlinked, files_in_progress,
  count_
};

struct Rule {
  RuleId id;
  std::string_view name;  // printed as [name], stable for scripts
  Severity severity;
  std::string_view what;  // what the rule checks
  std::string_view fix;   // printed after the finding's detail
};

inline constexpr std::size_t kRuleCount = static_cast<std::size_t>(RuleId::count_);
extern const std::array<Rule, kRuleCount> kRules;

const Rule& rule(RuleId id);
std::optional<RuleId> rule_by_name(std::string_view name);
std::string_view severity_name(Severity s);

// Below this share of ET op nodes found as a Record function id, the link
// is missing part of the trace (join.rf_id).
inline constexpr double kJoinCoverageThreshold = 0.99;

// An ET whose op nodes outnumber the device trace's host spans by more than
// this factor (plus kOpCountSlack) cannot be the record of the same ops
// (join.op_count): the device trace has a span for every op the ET has.
inline constexpr double kOpCountFactor = 1.1;
inline constexpr std::uint64_t kOpCountSlack = 16;

}  // namespace chakrashim::tools::check
