// One process's capture: the step window and what each of its boundaries
// does to torch (DESIGN.md sections 3 and 4.3).
//
// Threads. RecordFunction callbacks are plain function pointers, so the
// state they reach is this process-wide object (never destroyed: callbacks
// and exit hooks can run during exit). Window transitions happen under
// mutex_, on whichever thread completes an optimizer step (the stepping
// thread); the op-span callback's hot path reads only atomics.
//
// Where a boundary acts. End callbacks run in registration order: our step
// callback, torch's ET callback, our op-span callback. A step ends in the
// step callback, but disabling the ET there would lose the step's own
// Optimizer.step node, so the boundary's actions are deferred to the
// op-span callback's end for the same record, after ET wrote it. Before
// the op-span callback is registered (the boundary that arms), they run at
// once.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <ATen/record_function.h>

#include "bridge/et_observer.h"
#include "bridge/signal_relay.h"
#include "bridge/span_store.h"
#include "bridge/trace_files.h"
#include "chakrashim/bridge_abi.h"
#include "window/step_window.h"

namespace chakrashim::bridge {

class Capture {
 public:
  static Capture& instance();

  // Registers the step callback and starts step 0 (DESIGN.md section 3).
  // Called once, with the GIL, from the core's pending call.
  void attach(const chakrashim_capture_config& config);

  // --- from the step callback (USER_SCOPE records only) ---
  // An outermost step-marker record ended on this thread.
  void on_step_end(const at::RecordFunction& fn);
  void count_user_record(const char* name);
  const std::string& marker() const { return marker_; }

  // --- from the op-span callback (all scopes, while armed) ---
  bool keeping() const { return keeping_.load(std::memory_order_acquire); }
  // Keeps one span, unless CHAKRA_MAX_MEMORY is reached: then nothing more
  // is kept and the window is cut at the stepping thread's next op.
  void add_span(HostSpan&& span);
  std::uint64_t next_external_id() { return external_id_.fetch_add(1, std::memory_order_relaxed); }
  // The record `fn` ended at `end_ns`; runs a deferred boundary if it is its.
  void on_op_end(const at::RecordFunction& fn, std::int64_t end_ns);

  // The process is exiting (atexit, registered after the ET's add).
  void at_exit();

  // A signal was recorded: the stepping thread finalizes at this op.
  void on_signal_pending() {
    if (os_tid_cached() == stepping_tid_.load(std::memory_order_relaxed))
      signals_.poll_on_stepping_thread();
  }
  // The memory cap was reached: one relaxed load, for every op.
  bool cut_requested() const { return cut_at_ns_.load(std::memory_order_relaxed) != 0; }
  // The stepping thread ends the window at this op (reason memory_cap).
  void on_cut_requested();

  // A forked child: every callback turns itself off (async-signal-safe).
  void mark_forked_child() {
    dead_.store(true, std::memory_order_relaxed);
    signals_.reset_in_forked_child();
  }
  bool dead() const { return dead_.load(std::memory_order_relaxed); }
  int et_fd() const { return et_fd_.load(std::memory_order_relaxed); }

 private:
  Capture() = default;
  void apply(const window::Boundary& b, std::int64_t now_ns, std::uint64_t tid);
  void step_end_locked(const at::RecordFunction& fn);
  void attach_locked(const chakrashim_capture_config& config);
  void arm();
  void disarm(const std::string& reason, std::optional<std::uint64_t> partial_step,
              bool from_signal = false);
  // Ends the window for a signal: the steps so far plus the partial one.
  void finalize_for_signal(int sig);
  // The step in progress, as a partial step, if it was being kept.
  // (force: even though keeping stopped, as after the memory cap).
  std::optional<std::uint64_t> close_partial_step(bool force = false);
  static std::uint64_t os_tid_cached();
  // On the stepping thread, holding no lock of ours (it takes the GIL):
  // torch.distributed's state, and the ET's "## process_group:init ##" node
  // once a group exists. Runs when a boundary asked for it.
  void refresh_distributed_if_wanted();
  void warn_if_never_armed();
  // At arm: CUPTI activity collection, unless there is no CUDA, the job's
  // own torch.profiler runs, or CUPTI refuses (then the trace is host-only).
  void start_device_collection();
  // At disarm: the window's GPU records (empty unless collection started).
  DeviceCapture stop_device_collection();
  // Waits for the background writer within CHAKRA_EXIT_TIMEOUT; one line if not.
  void wait_for_writer();

  std::mutex mutex_;
  chakrashim_capture_config config_{};
  std::string marker_;
  std::optional<window::StepWindow> window_;
  EtObserver et_;
  SpanStore spans_;
  TraceWriterThread writer_;
  SignalRelay signals_;
  bool window_done_ = false;
  std::optional<std::string> distributed_json_;  // last known, see refresh_distributed
  bool pg_node_written_ = false;
  std::atomic<bool> refresh_wanted_{false};
  // When the memory cap was hit (ns), 0 before; the window is then cut.
  std::atomic<std::int64_t> cut_at_ns_{0};  // disarmed, for good: later steps change nothing
  std::atomic<std::uint64_t> stepping_tid_{0};
  std::optional<files::Layout> layout_;
  bool armed_ = false;
  bool ever_armed_ = false;
  bool host_on_ = false;
  bool device_on_ = false;
  std::string host_state_ = "on";
  bool cupti_started_ = false;
  std::string cupti_state_ = "absent";  // the metadata's device_trace.cupti
  at::CallbackHandle op_span_handle_ = at::INVALID_CALLBACK_HANDLE;
  std::vector<StepSpan> steps_;
  std::int64_t step_start_ns_ = 0;

  // The boundary waiting for the op-span end of the marker record `handle`.
  struct Pending {
    at::RecordFunctionHandle handle = 0;
    window::Boundary boundary;
    std::uint64_t tid = 0;
  };
  std::optional<Pending> pending_;  // guarded by mutex_
  // pending_->handle, readable without the lock by every op's end.
  std::atomic<at::RecordFunctionHandle> pending_handle_{0};

  std::atomic<bool> keeping_{false};
  std::atomic<bool> dead_{false};
  std::atomic<bool> exiting_{false};
  std::atomic<int> et_fd_{-1};
  std::atomic<std::uint64_t> external_id_{1};
  std::atomic<std::uint64_t> markers_seen_{0};
  std::atomic<std::uint64_t> optimizer_records_seen_{0};
};

// OS thread id and process id, cached per thread / process.
std::uint64_t os_tid();
std::int64_t now_ns();

}  // namespace chakrashim::bridge
