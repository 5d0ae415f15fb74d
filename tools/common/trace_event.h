// One event of a device trace's traceEvents, as the trace reader hands it to
// a consumer: only the fields that check, link and report read. The reader
// reuses one instance for every event, so the strings keep their capacity.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace chakrashim::tools {

// An integer argument: absent, an integer, or present with another type
// (which counts as present, but has no usable value).
struct IntArg {
  bool present = false;
  std::optional<std::int64_t> value;
};

struct TraceEvent {
  std::string ph, cat, name;
  // Kineto writes numbers; a string pid/tid (Kineto's "Record Window End"
  // has "") is hashed, which is enough to tell threads apart.
  std::int64_t pid = 0, tid = 0;
  std::optional<std::int64_t> ts_ns, dur_ns;  // exact, from the decimal text
  IntArg external_id, record_function_id, correlation, stream;
  // args "Process Group Name" on NCCL kernels (link copies it as pg_name).
  bool has_process_group_name = false;
  std::string process_group_name;

  void clear() {
    ph.clear();
    cat.clear();
    name.clear();
    pid = tid = 0;
    ts_ns.reset();
    dur_ns.reset();
    external_id = record_function_id = correlation = stream = IntArg{};
    has_process_group_name = false;
    process_group_name.clear();
  }
};

}  // namespace chakrashim::tools
