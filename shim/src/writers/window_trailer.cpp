#include "writers/window_trailer.h"

namespace chakrashim::writers {

std::string window_reason(const WindowEnd& w) {
  return w.cut_by_memory && w.reason == "end_step" ? "memory_cap" : w.reason;
}

TraceTrailer window_trailer(const WindowEnd& w) {
  TraceTrailer t;
  t.trace_name = w.trace_name;
  t.version = w.version;
  t.torch_version = w.torch_version;
  t.world_size = w.world_size;
  t.run_id = w.run_id;
  t.steps.start = w.start;
  t.steps.end = w.end;
  t.steps.warmup = w.warmup;
  t.steps.active = w.active;
  // The partial step is kept as a span but is no captured step: its end is
  // the moment the window stopped, not the step's.
  for (const auto s : w.kept)
    if (!w.partial_step || s != *w.partial_step) t.steps.captured.push_back(s);
  const std::string reason = window_reason(w);
  // A window that reached its end step is whole, unless the cap cut its
  // records: the window's own view (it stopped before its end) counts only
  // for the other reasons.
  t.steps.cut_short = (w.window_cut_short && reason != "end_step") || w.cut_by_memory;
  t.steps.partial_last_step = w.partial_step;
  t.steps.reason = reason;
  t.ranks_filter = w.ranks_filter;
  t.host_trace = w.host_on ? "on" : (w.host_asked ? w.host_state : "off");
  t.cupti = w.device_on ? w.cupti_state : "disabled";
  t.truncated_at_ns = w.truncated_at_ns;
  t.device_sync = w.device_sync;
  return t;
}

}  // namespace chakrashim::writers
