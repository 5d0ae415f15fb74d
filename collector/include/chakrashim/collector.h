// The CUPTI activity collector (DESIGN.md sections 2 and 4.5), as the torch
// bridge sees it: no CUPTI or CUDA type crosses this header.
//
// One window per process: start() at arm, push()/pop() around every kept
// synchronous op, stop() at disarm on the stepping thread. What stop()
// returns is finished by join_device_capture() on the writer thread.
//
// Threads: start/stop run on the stepping thread under the capture's lock;
// push/pop/note_thread run on any thread inside torch ops (one atomic load
// when inactive); CUPTI calls our buffer callbacks on its own threads; one
// decode thread of ours runs from start to stop.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "chakrashim/events.h"

namespace chakrashim::collector {

struct CollectorConfig {
  std::optional<std::string> cupti_lib;      // CHAKRA_CUPTI_LIB
  std::optional<std::string> torch_lib_dir;  // where the loaded libtorch lives
  std::optional<std::string> cuda_home;      // CUDA_HOME / CUDA_PATH
  std::uint64_t buffer_bytes = 64ULL << 20;  // CHAKRA_CUPTI_BUFFERS
  std::uint64_t event_bytes = 1ULL << 30;    // decoded events, at most
  bool sync_records = false;                 // CHAKRA_CUPTI_EXTRA=sync
  bool overhead_records = false;             // CHAKRA_CUPTI_EXTRA=overhead
};

struct StartOutcome {
  // ok, absent (no CUDA / no libcupti), refused (another profiler holds
  // CUPTI), failed (an error), as the metadata's device_trace.cupti says.
  std::string status;
  std::string message;  // one line for the log, when not ok ("" when quiet)
};

class Collector {
 public:
  // Process-wide: CUPTI's buffer callbacks carry no user pointer, so they
  // reach the collector through this one object, which is never destroyed
  // (CUPTI may call back during exit).
  static Collector& instance();

  // Is there CUDA in this process (libcuda loaded), or was a libcupti named?
  static bool cuda_present(const CollectorConfig& config);

  StartOutcome start(const CollectorConfig& config);
  bool active() const;

  // The op-span callback: our external id around a synchronous op. push
  // returns whether it pushed; pop only what was pushed.
  bool push(std::uint64_t external_id);
  void pop();
  // This thread runs ops: remember its CUPTI thread id -> OS tid.
  void note_thread(std::int64_t os_tid);

  // Synchronizes the device, disables every activity kind, flushes, waits
  // for the decode thread, and hands the window's records over.
  DeviceCapture stop();

 private:
  Collector() = default;
};

// On the writer thread: keeps only the window's events (launches inside a
// captured step, GPU ops of kept launches), joins external ids through the
// correlation records, resolves launch thread ids, demangles kernel names
// and marks launch/GPU-op pairs for ac2g flows. GPU ops that no op claims
// are left out and counted in unattributed_gpu_ops. `steps`: [start, end] ns of
// each captured step.
void join_device_capture(DeviceCapture& capture,
                         const std::vector<std::pair<std::int64_t, std::int64_t>>& steps);

// "_Z3fooi" -> "foo(int)"; a name that is not a mangled C++ name stays.
std::string demangle(const std::string& name);

}  // namespace chakrashim::collector
