// One process's capture: the step window and what each of its boundaries
// does to torch (docs/design.md sections 3 and 4.3).
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

#include "bridge/distributed_watch.h"
#include "bridge/et_observer.h"
#include "bridge/et_recorder.h"
#include "bridge/optimizer_hooks.h"
#include "bridge/signal_relay.h"
#include "bridge/span_store.h"
#include "bridge/trace_files.h"
#include "bridge/trigger_watch.h"
#include "chakrashim/bridge_abi.h"
#include "chakrashim/collector.h"
#include "chakrashim/memory_budget.h"
#include "window/step_window.h"
#include "window/window_plan.h"

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

  // --- from the op-span callback (all scopes, while armed) ---
  bool keeping() const { return keeping_.load(std::memory_order_acquire); }
  // Keeps one span, unless CHAKRA_MAX_MEMORY is reached: then nothing more
  // is kept and the window is cut at the stepping thread's next op.
  // `buffer` is span_buffer() of the thread that started the op.
  void add_span(SpanStore::ThreadBuffer& buffer, const SpanRecord& span);
  SpanStore::ThreadBuffer* span_buffer() { return spans_.local(); }
  // The memory cap was hit (by any thread): disables the ET at once.
  void stop_et_for_cut();
  // This thread is inside one of the capture's own critical sections.
  static bool this_thread_holds_lock();
  std::uint64_t next_external_id() { return external_id_.fetch_add(1, std::memory_order_relaxed); }
  // The record `fn` ended at `end_ns`; runs a deferred boundary if it is its
  // (unless the native ET recorder's end callback, which runs later, does).
  void on_op_end(const at::RecordFunction& fn, std::int64_t end_ns);
  // From the native recorder's end callback, after it recorded `fn`'s end.
  void on_recorder_op_end(const at::RecordFunction& fn);

  // The process is exiting (atexit, registered after the ET's add).
  void at_exit();

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
  Capture() = default;
  void apply(const window::Boundary& b, std::int64_t now_ns, std::uint64_t tid);
  void run_pending_boundary(const at::RecordFunction& fn, std::int64_t end_ns);
  // The ET, by whichever records it (CHAKRA_ET_RECORDER).
  void et_enable();
  void et_disable();
  void et_remove();
  bool et_enabled() const;
  void step_end_locked(const at::RecordFunction& fn);
  void attach_locked(const chakrashim_capture_config& config);
  void install_flush_signal();
  // From the optimizer post hook (GIL held): an outermost optimizer step
  // ended; counted here unless the step callback counts (armed, or the
  // hooks not in yet).
  void on_hook_step_end();
  // The hooks are in: the step callback goes, unless the window is open.
  void on_hooks_registered();
  void arm();
  // At the boundary that begins the step before a window's first one: the
  // costly part of arming, so that the window's first step looks like the
  // others (issue #34): the folders, the CUDA probe, and the first
  // question to torch.distributed. Never claims a file: a job that dies in
  // that step leaves no .partial behind.
  void prepare_locked();
  // A preparation no window used (exit, a plan that changed).
  void discard_prepared_locked();
  // The window's folders (each window's own when there are many): chosen,
  // and made unless `choose_only`.
  std::optional<files::Layout> window_folders(bool host, bool device, std::string& error,
                                              bool choose_only = false);
  collector::CollectorConfig collector_config();
  void disarm(const std::string& reason, std::optional<std::uint64_t> partial_step);
  // Ends the window for a signal: the steps so far plus the partial one.
  void finalize_for_signal(int sig);
  // The step in progress, as a partial step, if it was being kept.
  // (force: even though keeping stopped, as after the memory cap).
  std::optional<std::uint64_t> close_partial_step(bool force = false);
  static std::uint64_t os_tid_cached();
  // On the DistributedWatch thread, holding no lock of ours: keeps
  // torch.distributed's state, and writes the ET's "## process_group:init ##"
  // node once a group exists while the ET records.
  void on_distributed_answer(const std::string& json);
  // At a boundary inside the window, and at every window's end: the job's
  // torch.profiler took CUPTI over since arm; stand back (the device trace
  // becomes host-only).
  void stand_back_if_profiler_started();
  // At each step end, in or after the window (mutex_ held): once the
  // profiler we stood back for stopped, the kinds we enabled go off.
  void release_cupti_if_profiler_stopped();
  void warn_if_never_armed();
  // At arm: CUPTI activity collection, unless there is no CUDA, the job's
  // own torch.profiler runs, or CUPTI refuses (then the trace is host-only).
  // `cuda`: the CUDA probe made when the window was prepared, if it was.
  void start_device_collection(std::optional<bool> cuda = std::nullopt);
  // At disarm, whatever ended the window: the window's GPU records (empty
  // unless collection started, or after standing back for the profiler).
  DeviceCapture stop_device_collection();
  // Waits for the background writer within CHAKRA_EXIT_TIMEOUT; one line if not.
  void wait_for_writer();
  // At a step end, holding no lock of ours: waits for the writer while a
  // terminating signal waits for the files to be delivered.
  void wait_if_ending();

  // --- windows after the first (window_plan.h, docs/on-demand.md) ---
  // mutex_ held, at each step end before the window sees it (on demand):
  // starts the trigger watch at the first one, notes the step, and takes
  // the requests that came (trigger files, the trigger signal).
  void before_step_end_locked();
  void take_requests_locked();
  void request_window_locked(std::uint64_t first_step, std::uint64_t steps,
                             const std::string& origin);
  // mutex_ held, once a window ended (or none was planned): the next one.
  void plan_next_window_locked();
  void start_trigger_watch_locked();
  bool on_demand() const { return plan_ && plan_->mode() == window::PlanMode::on_demand; }

  std::mutex mutex_;  // taken through CaptureLock only
  chakrashim_capture_config config_{};
  std::string marker_;
  std::optional<window::StepWindow> window_;
  // Which windows this process captures; window_ runs one at a time.
  std::optional<window::WindowPlan> plan_;
  // window_ holds a window to capture (open or waited for), not never().
  bool window_planned_ = false;
  TriggerWatch triggers_;
  EtObserver et_;
  bool et_native_ = false;  // CHAKRA_ET_RECORDER=native: EtRecorder records the ET
  SpanStore spans_;
  TraceWriterThread writer_;
  SignalRelay signals_;
  DistributedWatch distributed_;
  OptimizerHooks hooks_;
  // The step callback is registered (it counts steps; the hooks do not).
  std::atomic<bool> rf_counting_{false};
  at::CallbackHandle step_handle_ = at::INVALID_CALLBACK_HANDLE;
  std::atomic<int> open_markers_{0};
  std::atomic<bool> saw_backward_{false};
  // register_backward_watch's handle while it waits for the first backward.
  std::atomic<at::CallbackHandle> backward_watch_{at::INVALID_CALLBACK_HANDLE};
  // The window's one memory budget (spans, GPU events, correlation records).
  MemoryBudget budget_;
  bool window_done_ = false;  // disarmed, for good: later steps change nothing
  // The ET records now (enabled), and how many times that changed: the
  // watch thread writes the process-group node only while it holds.
  std::atomic<bool> et_recording_{false};
  std::atomic<std::uint64_t> et_generation_{0};
  std::atomic<bool> pg_node_written_{false};
  // When the memory cap was hit (ns), 0 before.
  std::atomic<std::int64_t> cut_at_ns_{0};
  std::atomic<std::uint64_t> stepping_tid_{0};
  std::optional<files::Layout> layout_;
  // What prepare_locked made ready for the window starting at `start`.
  struct Prepared {
    std::uint64_t start = 0;
    bool host = false;
    bool device = false;
    std::optional<files::Layout> folders;  // chosen, made at arm; none: no index (arm says why)
    std::optional<bool> cuda;              // device: libcuda was loaded
  };
  std::optional<Prepared> prepared_;
  bool armed_ = false;
  bool ever_armed_ = false;
  bool host_on_ = false;
  bool device_on_ = false;
  std::string host_state_ = "on";
  bool cupti_started_ = false;
  bool cupti_release_pending_ = false;  // stood back; kinds off once the profiler stops
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
  // The writer's lateness is said once: at exit both the relay's watcher
  // (before it gives SIGTERM back) and at_exit wait for the writer.
  std::atomic<bool> writer_late_said_{false};
  // Descriptors open on the ET file (et_observer.h), for the fork guard.
  static constexpr int kMaxEtFds = 4;
  std::atomic<int> et_fds_[kMaxEtFds] = {-1, -1, -1, -1};
  std::atomic<std::uint64_t> external_id_{1};
  std::atomic<std::uint64_t> markers_seen_{0};
  std::atomic<std::uint64_t> optimizer_records_seen_{0};
};

// OS thread id and process id, cached per thread / process.
std::uint64_t os_tid();
std::int64_t now_ns();

}  // namespace chakrashim::bridge
