// One process's capture: the wiring between the window scheduler (which
// windows, when: window_scheduler.h), the host trace (the ET, by either
// backend: host_trace.h), the device side (CUPTI: device_side.h) and the
// window's output (trace_files.h, writers/window_trailer.h), driven by the
// step boundaries that torch's callbacks report (docs/design.md sections 3
// and 4.3). capture.cpp counts steps and runs each boundary;
// capture_window.cpp arms and disarms a window.
//
// Threads. RecordFunction callbacks are plain function pointers, so the
// state they reach is this process-wide object (never destroyed: callbacks
// and exit hooks can run during exit). Window transitions happen under
// mutex_, on whichever thread completes an optimizer step (the stepping
// thread); the op-span callback's hot path reads only atomics. Nothing
// that can run a RecordFunction or Python is called under mutex_; should a
// torch call made under it run one anyway, the op-span callback on that
// thread sees the lock held (this_thread_holds_lock) and does not act on a
// pending signal or cut, which would lock mutex_ again.
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

#include "bridge/device_side.h"
#include "bridge/distributed_watch.h"
#include "bridge/host_trace.h"
#include "bridge/module_scopes.h"
#include "bridge/optimizer_hooks.h"
#include "bridge/signal_relay.h"
#include "bridge/span_store.h"
#include "bridge/trace_files.h"
#include "bridge/window_scheduler.h"
#include "chakrashim/bridge_abi.h"
#include "chakrashim/immortal.h"
#include "chakrashim/memory_budget.h"

namespace chakrashim::bridge {

// The torch version this bridge was built against (bridge_entry.cpp).
const char* built_torch_version();

class Capture {
 public:
  static Capture& instance();

  // Registers the step callback and starts step 0 (docs/design.md section 3).
  // Called once, with the GIL, from the core's pending call.
  void attach(const chakrashim_capture_config& config);

  // --- from the step callback (USER_SCOPE and BACKWARD records) ---
  // An outermost step-marker record ended on this thread.
  void on_step_end(const at::RecordFunction& fn);
  void count_user_record(const char* name);
  // An outermost marker opened / closed on some thread (registering the
  // optimizer hooks waits until none is open).
  void marker_opened() { open_markers_.fetch_add(1, std::memory_order_relaxed); }
  void marker_closed() { open_markers_.fetch_sub(1, std::memory_order_relaxed); }
  // An autograd backward function ran (a sign that the job trains).
  void note_backward();
  const std::string& marker() const { return marker_; }
  // A DeepSpeed engine's first step says how many steps the job took
  // (global_steps): where more were counted (its inner optimizer's, one per
  // parameter group, before the engine's step was known), the count moves
  // back to it, well before the window only (StepWindow::recount). GIL held.
  void recount_engine_steps(std::uint64_t global_steps);
  // Steps are counted by the RecordFunction step callback now (inside the
  // window, or before torch.optim's hooks are in), not by the hooks.
  bool counting_by_records() const { return rf_counting_.load(); }

  // --- from the op-span callback (all scopes, while armed) ---
  bool keeping() const { return keeping_.load(std::memory_order_acquire); }
  // The window's ops are recorded now, as spans or in the ET (with the
  // device trace off, only the ET), in this process (not a forked child):
  // when module scopes open records. Any thread.
  bool window_records() const { return !dead() && (keeping() || host_.recording()); }
  // Keeps one span, unless CHAKRA_MAX_MEMORY is reached: then nothing more
  // is kept and the window is cut at the stepping thread's next op.
  // `buffer` is span_buffer() of the thread that started the op: a kept op
  // is opened at its start (before its time is read), and ended with its
  // record (SpanStore::open, end).
  void open_span(SpanStore::ThreadBuffer& buffer, OpenSpan& open) { spans_.open(buffer, open); }
  void end_span(SpanStore::ThreadBuffer& buffer, OpenSpan& open, const SpanRecord& span);
  SpanStore::ThreadBuffer* span_buffer() { return spans_.local(); }
  // The memory cap was hit (by any thread): disables the ET at once.
  void stop_et_for_cut();
  // This thread is inside one of the capture's own critical sections.
  static bool this_thread_holds_lock();
  std::uint64_t next_external_id() { return external_id_.fetch_add(1, std::memory_order_relaxed); }
  // The record `fn` ended at `end_ns`; runs a deferred boundary if it is its
  // (unless the native ET recorder ends ops: its end record, later in the
  // same callback, is followed by on_recorder_op_end).
  void on_op_end(const at::RecordFunction& fn, std::int64_t end_ns);
  // After the native recorder recorded `fn`'s end (callbacks.cpp, op_end_with_et).
  void on_recorder_op_end(const at::RecordFunction& fn);

  // The process is exiting (atexit, registered after the ET's add).
  void at_exit();
  // Python's atexit callbacks run (python_exit.h; main thread, GIL held):
  // the torch.distributed watch asks Python no more (a question under way
  // finishes first: distributed_watch.h), and SIGINT/SIGTERM stay with the
  // window's relay through Python's finalization. False if
  // `ignore_in_python` left a Python error set.
  bool keep_signals_through_python_exit(int (*ignore_in_python)(int sig)) {
    if (dead()) return true;
    distributed_.stop_before_python_finalizes();
    return signals_.at_python_exit(ignore_in_python);
  }

  // A signal was recorded: the stepping thread finalizes at this op.
  void on_signal_pending() {
    if (os_tid_cached() == stepping_tid_.load(std::memory_order_relaxed))
      signals_.poll_on_stepping_thread();
  }
  // The memory cap was reached (by spans or GPU records): one relaxed load,
  // for every op.
  bool cut_requested() const { return budget_.exhausted(); }
  // The stepping thread ends the window at this op (reason memory_cap).
  void on_cut_requested();

  // A forked child (pthread_atfork child handler, async-signal-safe except
  // where et_observer.h says): every callback of ours turns itself off,
  // torch's ET callback is disabled, and the descriptors open on the
  // parent's ET file are pointed at /dev/null, so that the child's copy of
  // torch's stream buffer can never reach the parent's file.
  void on_forked_child();
  bool dead() const { return dead_.load(std::memory_order_relaxed); }

 private:
  friend Capture& ::chakrashim::immortal<Capture>();
  Capture() = default;
  void apply(const window::Boundary& b, std::int64_t now_ns, std::uint64_t tid);
  // Says where CHAKRA_MAX_MEMORY ran out and disarms (memory_cap); the lock
  // is held.
  void cut_for_memory(std::uint64_t step, std::optional<std::uint64_t> partial_step);
  void run_pending_boundary(const at::RecordFunction& fn, std::int64_t end_ns);
  void step_end_locked(const at::RecordFunction& fn);
  void install_flush_signal();
  // From the optimizer post hook (GIL held): an outermost optimizer step
  // ended; counted here unless the step callback counts (armed, or the
  // hooks not in yet).
  void on_hook_step_end();
  // The hooks are in: the step callback goes, unless the window is open.
  void on_hooks_registered();
  // From the optimizer post hook, after the step's count (GIL held): module
  // scopes in for the next step if it is in the window, else out.
  // `was_counting`: the step callback counts this step (its boundary acts
  // after the hook).
  void sync_module_scopes(bool was_counting);

  // --- capture_window.cpp: a window's life ---
  void arm();
  // At the boundary that begins the step before a window's first one: the
  // costly part of arming, so that the window's first step looks like the
  // others (issue #34): the folder index, the CUDA probe, and the first
  // question to torch.distributed. Never makes a folder nor claims a file:
  // a job that dies in that step leaves nothing behind.
  void prepare_locked();
  // The window's folders (each window's own when there are many): chosen,
  // and made unless `choose_only`.
  std::optional<files::Layout> window_folders(bool host, bool device, std::string& error,
                                              bool choose_only = false);
  void disarm(const std::string& reason, std::optional<std::uint64_t> partial_step);
  // Everything the writer thread needs for the window that just ended.
  WindowOutput window_output(std::string reason, std::optional<std::uint64_t> partial_step,
                             DeviceCapture device);
  // Ends the window for a signal: the steps so far plus the partial one.
  void finalize_for_signal(int sig);
  // The step in progress, as a partial step, if it was being kept.
  // (force: even though keeping stopped, as after the memory cap).
  std::optional<std::uint64_t> close_partial_step(bool force = false);
  static std::uint64_t os_tid_cached();
  void warn_if_never_armed();
  // Waits for the background writer within CHAKRA_EXIT_TIMEOUT; one line if not.
  void wait_for_writer();
  // At exit: the same, said after a second, with Ctrl-C guarded (issue #48).
  void wait_for_writer_at_exit();
  // At exit, a window that kept no whole step: nothing written, said.
  void abandon_window_at_exit();
  // Whether this process has shown that it trains: an optimizer step or
  // record, or an autograd backward pass. A DataLoader worker, a launcher or
  // a helper process under START_STEP=0 never does.
  bool shown_training() const {
    return markers_seen_.load() > 0 || optimizer_records_seen_.load() > 0 || saw_backward_.load();
  }
  // A window cut (memory cap, signal) before any whole step in a process
  // that never trained: it holds no training, so nothing is written, as at
  // exit (seed 6041: each spawned DataLoader worker of a START_STEP=0 job,
  // cut by CHAKRA_MAX_MEMORY, wrote a capture of 1 op beside the job's).
  bool holds_no_training() const { return steps_.empty() && !shown_training(); }
  // Such a window abandoned as at exit, silently (no step was taken here),
  // and no later one planned; false where the window holds training.
  bool abandon_if_no_training();
  // At a step end, holding no lock of ours: waits for the writer while a
  // terminating signal waits for the files to be delivered.
  void wait_if_ending();

  std::mutex mutex_;  // taken through CaptureLock only
  chakrashim_capture_config config_{};
  std::string marker_;
  WindowScheduler scheduler_;
  HostTrace host_;
  DeviceSide device_;
  SpanStore spans_;
  TraceWriterThread writer_;
  SignalRelay signals_;
  DistributedWatch distributed_;
  OptimizerHooks hooks_;
  // CHAKRA_MODULE_SCOPES' hooks; reached only from the optimizer post hook,
  // under the GIL (which is its lock).
  ModuleScopes modules_;
  // The step callback is registered (it counts steps; the hooks do not).
  std::atomic<bool> rf_counting_{false};
  at::CallbackHandle step_handle_ = at::INVALID_CALLBACK_HANDLE;
  std::atomic<int> open_markers_{0};
  std::atomic<bool> saw_backward_{false};
  // register_backward_watch's handle while it waits for the first backward.
  std::atomic<at::CallbackHandle> backward_watch_{at::INVALID_CALLBACK_HANDLE};
  // The window's one memory budget (spans, GPU events, correlation records).
  MemoryBudget budget_;
  // When the memory cap was hit (ns), 0 before.
  std::atomic<std::int64_t> cut_at_ns_{0};
  std::atomic<std::uint64_t> stepping_tid_{0};
  // Its RecordFunction thread id, taken at arm (capture lock held): the
  // native ET's tid of the thread, for a process-group node the writer adds.
  std::uint64_t stepping_rf_tid_ = 0;
  std::optional<files::Layout> layout_;
  // The armed window's folders are claimed at its end (arm says when).
  bool layout_deferred_ = false;
  // What prepare_locked made ready for the window starting at `start`.
  struct Prepared {
    std::uint64_t start = 0;
    bool host = false;
    bool device = false;
    std::optional<files::Layout> folders;  // chosen, made at arm; none: no index (arm says why)
    std::optional<bool> cuda;              // device: libcuda was loaded
  };
  std::optional<Prepared> prepared_;
  // The window's folders made and its files claimed (layout_), from what
  // the step before prepared if it can; false (said) if they cannot be.
  bool claim_folders(std::optional<Prepared>& prepared, bool host_on, bool* from_prepared = nullptr);
  bool armed_ = false;
  bool ever_armed_ = false;
  bool device_on_ = false;
  at::CallbackHandle op_span_handle_ = at::INVALID_CALLBACK_HANDLE;
  std::vector<StepSpan> steps_;
  std::int64_t step_start_ns_ = 0;
  std::int64_t step_start_mono_ns_ = 0;  // the same moment on CLOCK_MONOTONIC
  // The armed window's claimed .partial descriptors (Layout's claims), or
  // -1: what a forked child closes (async-signal-safe, no lock).
  std::atomic<int> claim_fds_[2] = {-1, -1};
  // The last steps that ran unrecorded (outside any window; step 0 left
  // out), for the recording cost's step figure (writers/recording_cost.h).
  // Stepping thread, under the capture's lock as the rest of apply().
  writers::StepRing unrecorded_steps_;

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
  // The writer's lateness is said once: at exit both the relay's watcher
  // (before it gives SIGTERM back) and at_exit wait for the writer.
  std::atomic<bool> writer_late_said_{false};
  std::atomic<std::uint64_t> external_id_{1};
  std::atomic<std::uint64_t> markers_seen_{0};
  std::atomic<std::uint64_t> optimizer_records_seen_{0};
};

// The exit hook (std::atexit): Capture::instance().at_exit().
void capture_exit_hook();

// OS thread id and process id, cached per thread / process.
std::uint64_t os_tid();
std::int64_t now_ns();
// CLOCK_MONOTONIC, for lengths of time (steps' durations).
std::int64_t monotonic_ns();

}  // namespace chakrashim::bridge
