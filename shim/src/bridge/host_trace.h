// The host side of a capture: the Execution Trace, recorded by one of two
// backends chosen at each arm: chakrashim's own recorder (et_recorder.h,
// CHAKRA_ET_RECORDER=native) or torch's ExecutionTraceObserver
// (et_observer.h). The capture speaks to this interface only.
//
// It also writes the ET's "## process_group:init ##" node once
// torch.distributed's state is known while the ET records (Chakra reads the
// process groups from it).
//
// Threads: choose/add/start/stop/finish run with the capture's lock held;
// on_distributed_answer runs on the distributed watch's thread, holding no
// lock of ours, and reads only atomics; on_forked_child is async-signal-safe
// (pthread_atfork child handler).
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include <ATen/record_function.h>

#include "bridge/et_observer.h"
#include "bridge/et_recorder.h"
#include "chakrashim/bridge_abi.h"
#include "chakrashim/memory_budget.h"

namespace chakrashim::bridge {

class HostTrace {
 public:
  // The ET would be captured at the next arm (quietly: arm says why not).
  static bool wanted(const chakrashim_capture_config& config) {
    return config.host_trace != 0 && !EtObserver::someone_else_observing();
  }
  // At arm: whether the ET is captured in this window, and by which
  // backend; one line when the job's own observer or its environment
  // decides otherwise.
  bool choose(const chakrashim_capture_config& config);
  bool on() const { return on_; }
  bool native() const { return on_ && native_; }
  // Why the ET is off, for the metadata (when it was asked for).
  const std::string& state() const { return state_; }
  // At arm, once the window's names are claimed: the backend added (the
  // observer opens `partial_path`; the native recorder's writer thread
  // writes it later). False, with the reason in `error`, and the ET off.
  bool add(const std::string& partial_path, MemoryBudget* budget, std::string& error);
  // The window's active steps begin: true if the ET records now.
  bool start_recording();
  // They end, or the memory cap stops the ET.
  void stop_recording();
  bool enabled() const;
  // At disarm: recording stops and the backend goes. `other_threads`: ops
  // ran on more than one thread in the window.
  void finish(bool other_threads);
  // The native recorder's records, for the writer thread.
  EtRecords take_records() { return EtRecorder::instance().take(); }
  // A window that keeps nothing (exit before any step): the backend goes.
  void remove();

  // On the distributed watch's thread: `pg_config` (torch.distributed's
  // process groups, as JSON) becomes the ET's process-group node, once per
  // window, if the ET records from before the node to after it.
  void write_process_groups(const std::string& pg_config);
  bool process_groups_written() const { return pg_node_written_.load(); }
  bool recording() const { return recording_.load(); }

  // A forked child: the descriptors open on the parent's ET file point at
  // /dev/null and both backends fall silent.
  void on_forked_child();

 private:
  EtObserver observer_;
  bool native_ = false;
  bool on_ = false;
  std::string state_ = "on";
  // The ET records now, and how many times that changed: the watch thread
  // writes the process-group node only while it holds.
  std::atomic<bool> recording_{false};
  std::atomic<std::uint64_t> generation_{0};
  std::atomic<bool> pg_node_written_{false};
  // Descriptors open on the observer's ET file, for the fork guard.
  static constexpr int kMaxFds = 4;
  std::atomic<int> fds_[kMaxFds] = {-1, -1, -1, -1};
};

}  // namespace chakrashim::bridge
