// The device trace's trailer (its chakrashim metadata) for one window: a pure
// function of what the capture knew when the window ended, so that every way
// a window ends (its end step, a signal, the memory cap, the exit) is
// described by one rule, testable without torch (tests/unit).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "writers/kineto_trace_writer.h"

namespace chakrashim::writers {

struct WindowEnd {
  // The window as planned.
  std::uint64_t start = 0, end = 0, warmup = 0, active = 1;
  // The steps kept (a partial last step among them, if any).
  std::vector<std::uint64_t> kept;
  std::optional<std::uint64_t> partial_step;
  // What ended it: end_step, exit, signal:SIGTERM, memory_cap, ...
  std::string reason = "end_step";
  // The window's own view: it ended before its planned end.
  bool window_cut_short = false;
  // The memory cap was reached by records delivered as the window ended.
  bool cut_by_memory = false;
  std::optional<std::int64_t> truncated_at_ns;
  // The host trace: captured, asked for (CHAKRA_HOST_TRACE), and why not.
  bool host_on = false, host_asked = false;
  std::string host_state = "on";
  // The device trace: captured, and CUPTI's state.
  bool device_on = false;
  std::string cupti_state = "absent";
  std::string device_sync = "none";
  std::optional<std::string> ranks_filter;
  std::optional<std::uint64_t> world_size;
  std::string run_id;
  std::string trace_name, version, torch_version;
};

// The reason the metadata gives: a window that reached its end step but
// whose last records hit the memory cap says memory_cap.
std::string window_reason(const WindowEnd& w);

TraceTrailer window_trailer(const WindowEnd& w);

}  // namespace chakrashim::writers
