// The device side of a capture: CUPTI activity collection for the window,
// and standing back when the job's own torch.profiler takes CUPTI (two users
// of the Activity API would steal each other's buffers; docs/design.md).
//
// Threads: every call is made with the capture's lock held, on the stepping
// thread or at exit; the collector has its own threads.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "chakrashim/bridge_abi.h"
#include "chakrashim/collector.h"
#include "chakrashim/memory_budget.h"

namespace chakrashim::bridge {

class DeviceSide {
 public:
  // At attach: the capture's configuration and its window's memory budget,
  // both owned by the capture and alive for the process.
  void configure(const chakrashim_capture_config* config, MemoryBudget* budget) {
    config_ = config;
    budget_ = budget;
  }
  // libcuda is loaded: a dlopen(RTLD_NOLOAD), a few hundred microseconds on
  // a CPU job (it searches the library path), so asked at the step before
  // the window when it can be.
  bool cuda_present() const;
  // At arm: collection, unless there is no CUDA, the job's own
  // torch.profiler runs, or CUPTI refuses (then the trace is host-only).
  // `cuda`: the probe made at the step before the window, if it was.
  void start(std::optional<bool> cuda = std::nullopt);
  // At every window's end: the window's GPU records (empty unless
  // collection started), bounded by `timeout`.
  DeviceCapture stop(std::chrono::milliseconds timeout);
  // At a boundary inside the window and at its end: the job's profiler took
  // CUPTI over since arm; stand back (the device trace becomes host-only).
  void stand_back_if_profiler_started();
  // At each step end after a stand-back: once that profiler stopped, the
  // activity kinds we enabled go off.
  void release_if_profiler_stopped();
  // The metadata's device_trace.cupti: ok, absent, refused, profiler_active.
  const std::string& cupti_state() const { return state_; }

 private:
  collector::CollectorConfig collector_config() const;

  const chakrashim_capture_config* config_ = nullptr;
  MemoryBudget* budget_ = nullptr;
  bool started_ = false;
  bool release_pending_ = false;  // stood back; kinds off once the profiler stops
  std::string state_ = "absent";
};

}  // namespace chakrashim::bridge
