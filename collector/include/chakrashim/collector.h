// The CUPTI activity collector (docs/design.md sections 2 and 4.5), as the torch
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

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "chakrashim/events.h"
#include "chakrashim/immortal.h"
#include "chakrashim/memory_budget.h"

namespace chakrashim::collector {

struct CollectorConfig {
  std::optional<std::string> cupti_lib;      // CHAKRA_CUPTI_LIB
  std::optional<std::string> torch_lib_dir;  // where the loaded libtorch lives
  std::optional<std::string> cuda_home;      // CUDA_HOME / CUDA_PATH
  std::uint64_t buffer_bytes = 64ULL << 20;  // CHAKRA_CUPTI_BUFFERS
  // The window's one memory budget (CHAKRA_MAX_MEMORY), shared with the op
  // spans; decoded events and correlation records charge it. nullptr: none.
  MemoryBudget* budget = nullptr;
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
  // for the decode thread, and hands the window's records over. The device
  // sync runs on a helper thread and is waited for at most `sync_limit`: a
  // rank stuck in a collective must still finalize and die of its SIGTERM.
  // Past the limit the helper is left behind (it holds nothing of ours),
  // the records CUPTI has are flushed, and device_sync says "timed_out".
  DeviceCapture stop(std::chrono::milliseconds sync_limit);

  // The job's torch.profiler started in mid-window and may have taken CUPTI
  // over (its buffer callbacks replace ours): stop using CUPTI without
  // touching the kinds or flushing (they may be the profiler's now), and
  // drop what this window decoded. Our buffers that CUPTI still holds go to
  // the profiler, which logs them as unknown and drops them.
  void stand_back();
  // After stand_back, once no profiler runs: disables the kinds we enabled
  // (no flush), so that nothing of ours records on. No-op otherwise.
  void release_after_stand_back();
  bool standing_back() const;

 private:
  friend Collector& ::chakrashim::immortal<Collector>();
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
