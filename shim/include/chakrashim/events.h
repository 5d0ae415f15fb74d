// Compact records that the bridge's callbacks (and later the CUPTI
// collector) produce and the writers consume. Times are nanoseconds on the
// host wall clock (CLOCK_REALTIME), as Kineto's are.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace chakrashim {

enum class HostCategory : std::uint8_t { cpu_op, user_annotation };

// One RecordFunction seen while armed.
struct HostSpan {
  HostCategory category = HostCategory::cpu_op;
  std::string name;
  std::int64_t pid = 0;
  std::int64_t tid = 0;  // OS thread id
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  std::uint64_t external_id = 0;  // unique per op in one trace
  std::uint64_t rf_id = 0;        // RecordFunction::handle(), = ET rf_id; 0: none
  std::optional<std::int64_t> sequence_nr;
  std::optional<std::uint64_t> fwd_thread_id;
  // Further args as (name, JSON value), e.g. the comm args torch gives a
  // record_param_comms op ("Collective name": "\"allreduce\"").
  std::vector<std::pair<std::string, std::string>> extra_args;
};

// One captured step: ProfilerStep#N, on the stepping thread.
struct StepSpan {
  std::uint64_t step = 0;
  std::int64_t pid = 0;
  std::int64_t tid = 0;
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  std::uint64_t external_id = 0;
};

}  // namespace chakrashim
