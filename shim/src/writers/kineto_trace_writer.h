// Events -> the device trace in Kineto's JSON format (docs/trace-format.md),
// written in one pass to a ByteSink:
//   { schemaVersion, deviceProperties, distributedInfo,
//     traceEvents: [...],
//     traceName, displayTimeUnit, baseTimeNanoseconds, chakrashim: {...} }
// Timestamps are microseconds relative to baseTimeNanoseconds with three
// decimals, as Kineto writes them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "chakrashim/events.h"
#include "files/byte_sink.h"
#include "json/json_emitter.h"
#include "writers/kineto_inputs.h"
#include "writers/recording_cost.h"

namespace chakrashim::writers {

// Kineto floors its base time to about three months so that every rank of a
// job shares it; we floor to 90 days.
//   1716423322416788000 -> 1710720000000000000
std::int64_t base_time_ns(std::int64_t first_event_ns);
// (base + 1234567 ns, base) -> "1234.567"; negative offsets keep the sign.
std::string format_us(std::int64_t ns, std::int64_t base_ns);

struct DistributedInfo {
  std::string backend;  // "gloo", "nccl"; "" (not written) when torch.distributed is down
  std::uint64_t rank = 0;
  std::optional<std::uint64_t> world_size;
  std::optional<std::uint64_t> pg_count;
  std::optional<std::string> pg_config_json;  // a JSON array, as torch gives it
};

struct TraceHeader {
  DistributedInfo distributed;
  std::vector<std::string> device_properties_json;  // one JSON object per device
};

// A step that holds more than one iteration of the job's loop: a GradScaler
// skipped the optimizer step of all but the last (inf or nan gradients), so
// their work counts as one step (issue #49).
struct MergedStep {
  std::uint64_t step = 0;
  std::uint64_t iterations = 0;
  std::string why;  // schema::kMergedGradScaler
};

struct StepsMeta {
  std::uint64_t start = 0, end = 0, warmup = 0, active = 1;
  std::vector<std::uint64_t> captured;
  bool cut_short = false;
  std::optional<std::uint64_t> partial_last_step;
  std::string reason = "end_step";  // end_step, exit, signal:SIGTERM, memory_cap, ...
  std::vector<MergedStep> merged;
};

struct TraceTrailer {
  std::string trace_name;
  std::string version;
  std::string torch_version;
  StepsMeta steps;
  std::optional<std::string> ranks_filter;
  std::optional<std::uint64_t> world_size;
  // The launch the file belongs to (issue #49), the same on all its ranks;
  // written as ranks.run, null when none is known.
  std::string run_id;
  std::string host_trace = "on";  // on, off, or why it was skipped
  std::string cupti = "absent";   // ok, absent, refused, disabled, profiler_active
  std::uint64_t dropped_records = 0;
  std::uint64_t invalid_records = 0;
  std::uint64_t unattributed_gpu_ops = 0;
  std::string clock = "realtime";
  std::optional<std::int64_t> truncated_at_ns;
  std::string device_sync = "none";  // ok, none, timed_out
  // What recording cost each op, measured on the window's spans
  // (recording_cost.h); nullopt: nothing to measure it on.
  std::optional<RecordingCost> recording_cost;
};

class KinetoTraceWriter {
 public:
  KinetoTraceWriter(files::ByteSink& sink, std::int64_t base_ns) : json_(sink), base_ns_(base_ns) {}

  void begin(const TraceHeader& header);
  // `inputs`: the op's "Input Dims" and "Input type" (cpu_op only).
  void host_span(const HostSpan& span, const KinetoInputs* inputs = nullptr);
  void step_span(const StepSpan& step);
  // One of the collector's events (after join_device_capture), named
  // `name`; launches are drawn on the OS pid `pid`.
  // `extra_args`: more (name, JSON value) args, e.g. the comm args of the
  // record_param_comms op that launched an NCCL kernel.
  void device_event(const DeviceEvent& e, std::string_view name, std::int64_t pid,
                    const std::vector<std::pair<std::string, std::string>>* extra_args = nullptr);
  // The ac2g flow of a launch to its GPU op: call with the launch (start)
  // and with the GPU op (end); both carry e.flow.
  void flow(const DeviceEvent& e, std::int64_t pid);
  void process_name(std::int64_t pid, std::string_view name);
  void thread_name(std::int64_t pid, std::int64_t tid, std::string_view name);
  // Closes traceEvents and the document; false if any write failed.
  bool end(const TraceTrailer& trailer);

 private:
  void span_head(std::string_view cat, std::string_view name, std::int64_t pid, std::int64_t tid,
                 std::int64_t start_ns, std::int64_t end_ns);
  // device, context, stream, correlation: what every GPU op carries.
  void gpu_op_args(const DeviceEvent& e);

  JsonEmitter json_;
  std::int64_t base_ns_;
};

}  // namespace chakrashim::writers
