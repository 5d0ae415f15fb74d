// Compact records that the bridge's callbacks (and later the CUPTI
// collector) produce and the writers consume. Times are nanoseconds on the
// host wall clock (CLOCK_REALTIME), as Kineto's are.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "chakrashim/paged_vector.h"

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
  // How long the step took on CLOCK_MONOTONIC, for the recording cost
  // (start_ns/end_ns are wall-clock times, which a clock step between them
  // would make wrong: issue #48); 0 where not measured.
  std::int64_t duration_ns = 0;
};

// --- GPU side (the CUPTI collector) --------------------------------------
// Compact, CUPTI-free forms of CUPTI's activity records: the collector
// decodes into these, the device-trace writer reads them. Times are ns on
// the host wall clock, after the collector's clock calibration.
enum class DeviceEventKind : std::uint8_t {
  runtime,   // a CUDA runtime call (cudaLaunchKernel, ...)
  driver,    // a CUDA driver call (cuLaunchKernel, ...)
  kernel,
  memcpy,
  memset,
  sync,      // cudaStreamSynchronize & co. (opt-in SYNCHRONIZATION)
  overhead,  // CUPTI's own overhead (opt-in OVERHEAD)
};

struct DeviceEvent {
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  std::uint64_t external_id = 0;  // the innermost enclosing op's; 0: none
  // kernel: when it was queued (ns, 0: unknown); memcpy/memset: bytes.
  std::uint64_t extra = 0;
  std::int64_t tid = 0;  // runtime/driver: the OS thread id, once resolved
  std::uint32_t correlation = 0;  // CUPTI's; links a launch to its GPU op
  std::uint32_t name = 0;         // index into DeviceCapture::names
  // GPU ops: device / context / stream.
  // runtime/driver: process id / cbid / CUPTI's thread id (the low 32 bits
  // of pthread_self()), which the join resolves to an OS tid in `tid`.
  std::uint32_t device = 0;
  std::uint32_t context = 0;
  std::uint32_t stream = 0;
  std::int32_t grid[3] = {0, 0, 0};
  std::int32_t block[3] = {0, 0, 0};
  std::int32_t shared_memory = 0;  // static + dynamic, bytes
  std::uint16_t registers = 0;
  DeviceEventKind kind = DeviceEventKind::kernel;
  // memcpy: CUpti_ActivityMemcpyKind, then the source and destination
  // CUpti_ActivityMemoryKind; memset: the memory kind in [1].
  std::uint8_t copy[3] = {0, 0, 0};
  bool flow = false;  // launch <-> GPU op both present: draw an ac2g flow
};

// One window's GPU collection. The collector fills it on its decode thread;
// join_device_capture() (collector/event_join.h) finishes it on the writer
// thread; the Kineto writer reads it.
// CUPTI correlation id -> our external id (an EXTERNAL_CORRELATION record).
struct CorrelationLink {
  std::uint32_t correlation = 0;
  std::uint64_t external_id = 0;
};

struct DeviceCapture {
  PagedVector<DeviceEvent> events;
  // Every event's display name: kernels demangled by the join, launches
  // without CUPTI's _vNNNN suffix, "Memcpy HtoD (Pinned -> Device)", ...
  std::vector<std::string> names;
  // EXTERNAL_CORRELATION records of our kind: CUPTI correlation -> op.
  PagedVector<CorrelationLink> correlations;
  // CUPTI thread id (low 32 bits of pthread_self()) -> OS thread id.
  std::vector<std::pair<std::uint32_t, std::int64_t>> threads;
  std::vector<std::string> device_properties_json;
  std::string cupti = "absent";  // ok, absent, refused, disabled, profiler_active
  std::string clock = "realtime";  // or calibrated
  std::uint64_t dropped_records = 0;  // CUPTI's count, plus records over the cap
  std::uint64_t invalid_records = 0;  // zero or inverted timestamps
  std::uint64_t unattributed_gpu_ops = 0;  // GPU ops without an op's External id, left out
  std::optional<std::int64_t> truncated_at_ns;  // the event cap was hit here
  std::string device_sync = "none";  // ok, none, timed_out (collector.h, stop)
};

}  // namespace chakrashim
