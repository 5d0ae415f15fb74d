#include "bridge/capture.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#include <thread>

#include "bridge/bridge_log.h"
#include "bridge/callbacks.h"
#include "bridge/fork_guard.h"
#include "bridge/python_query.h"
#include "bridge/torch_version.h"
#include "config/value_grammar.h"
#include "chakrashim/collector.h"

#include <torch/csrc/autograd/profiler_kineto.h>
#include <torch/csrc/profiler/orchestration/observer.h>

#include <nlohmann/json.hpp>

namespace chakrashim::bridge {

std::uint64_t os_tid() {
  thread_local const std::uint64_t tid = static_cast<std::uint64_t>(::syscall(SYS_gettid));
  return tid;
}

std::int64_t now_ns() {
  // CLOCK_REALTIME: Kineto's host times and CUPTI's timestamps share it.
  timespec ts;
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

namespace {
void exit_hook() { Capture::instance().at_exit(); }

// How deep this thread is in the capture's critical sections (see
// capture.h: a callback must never act on a signal or cut there).
thread_local int t_lock_depth = 0;

// mutex_ taken, and this thread marked as holding it.
class CaptureLock {
 public:
  explicit CaptureLock(std::mutex& m) : lock_(m) { ++t_lock_depth; }
  ~CaptureLock() { --t_lock_depth; }
  CaptureLock(const CaptureLock&) = delete;
  CaptureLock& operator=(const CaptureLock&) = delete;

 private:
  std::lock_guard<std::mutex> lock_;
};

bool torch_profiler_running() {
  // isProfilerEnabledInMainThread (a profiler started on another thread,
  // the job's main one, say) is torch 2.5's (pytorch#128743); torch 2.4 has
  // only this thread's profiler state.
#if CHAKRA_TORCH_AT_LEAST(2, 5)
  if (torch::autograd::profiler::isProfilerEnabledInMainThread()) return true;
#endif
  return torch::profiler::impl::profilerEnabled();
}

std::string signal_name(int sig) {
  switch (sig) {
    case SIGTERM: return "SIGTERM";
    case SIGINT: return "SIGINT";
    case SIGUSR1: return "SIGUSR1";
    case SIGUSR2: return "SIGUSR2";
    default: return "signal " + std::to_string(sig);
  }
}

// How long the watcher waits for the stepping thread to reach an op before
// finalizing itself: short against Slurm's 30 s between SIGTERM and SIGKILL.
constexpr std::chrono::milliseconds kSignalGrace{2000};
}  // namespace

std::uint64_t Capture::os_tid_cached() { return os_tid(); }

bool Capture::this_thread_holds_lock() { return t_lock_depth > 0; }

Capture& Capture::instance() {
  // Never destroyed: exit hooks and callbacks on other threads may still
  // reach it while static destructors run.
  alignas(Capture) static unsigned char storage[sizeof(Capture)];
  static Capture* capture = new (storage) Capture();
  return *capture;
}

void Capture::attach(const chakrashim_capture_config& config) {
  attach_locked(config);
}

void Capture::attach_locked(const chakrashim_capture_config& config) {
  CaptureLock lock(mutex_);
  config_ = config;
  marker_ = config.step_marker ? config.step_marker : "Optimizer.step#";
  distributed_.set_on_answer([this](const std::string& json) { on_distributed_answer(json); });
  install_flush_signal();
  // A custom marker is counted by the step callback alone; the default one
  // by torch.optim's step hooks once they are in (optimizer_hooks.h).
  if (marker_ == "Optimizer.step#") {
    OptimizerHooks::Callbacks cb;
    cb.step_ended = [this] { on_hook_step_end(); };
    cb.registered = [this] { on_hooks_registered(); };
    cb.no_step_open = [this] { return open_markers_.load() == 0; };
    cb.give_up = [this] { return dead() || exiting_.load(); };
    hooks_.start(std::move(cb));
  }
  const window::Schedule first{config.start_step, config.end_step, config.warmup_steps,
                              config.active_steps};
  window::PlanConfig plan;
  plan.first = first;
  if (config.on_demand) {
    plan.mode = window::PlanMode::on_demand;
    plan.warmup = config.warmup_steps;
  } else if (config.repeat_every > 0) {
    plan.mode = window::PlanMode::repeating;
    plan.every = config.repeat_every;
    if (config.has_repeat_until) plan.until = config.repeat_until;
  }
  plan_.emplace(plan);
  const auto planned = plan_->first();
  window_.emplace(planned.value_or(window::WindowPlan::never()));
  window_planned_ = planned.has_value();
  window_done_ = !planned && !on_demand();
  // On demand, a child forked at any time must never look for triggers nor
  // publish this rank's step (nor keep our trigger signal's handler): the
  // fork guard turns it off, as it does a child forked in a window.
  if (on_demand()) install_fork_guard();
  if (config.trigger_signal != 0 && !TriggerSignal::install(config.trigger_signal))
    log_warn("cannot install the handler of " + signal_name(config.trigger_signal) +
             " (CHAKRA_TRIGGER_SIGNAL): it triggers nothing");
  step_handle_ = register_step_callback();
  rf_counting_.store(true);
  // The exit hook that warns about a window never reached; the one that
  // finalizes an armed window is registered again after the ET's add, so
  // that it runs before torch destroys the observer (section 4.8).
  std::atexit(&exit_hook);
  apply(window_->attach(), now_ns(), os_tid());
}

void Capture::install_flush_signal() {
  if (config_.flush_signal == 0) return;
  // Written by the handler as it is (it cannot format): one line, in the
  // core's format.
  const std::string line = "[chakrashim rank " + std::to_string(config_.rank) + "] " +
                           signal_name(config_.flush_signal) +
                           " (CHAKRA_FLUSH_SIGNAL) arrived outside the capture window: nothing to "
                           "flush; the job goes on\n";
  signals_.install_flush(config_.flush_signal, line, config_.log_level >= CHAKRASHIM_LOG_INFO);
}

void Capture::count_user_record(const char* name) {
  if (name && std::strncmp(name, "Optimizer.", 10) == 0)
    optimizer_records_seen_.fetch_add(1, std::memory_order_relaxed);
}

void Capture::wait_if_ending() {
  // A SIGTERM/SIGINT is recorded and not yet delivered: the relay delivers
  // it once the files are written, and the job ends of it. Without us it
  // would have ended at once; training on meanwhile would starve the writer,
  // which runs at SCHED_IDLE, past CHAKRA_EXIT_TIMEOUT on a busy machine.
  // One atomic load a step otherwise.
  if (SignalRelay::terminating_recorded()) wait_for_writer();
}

void Capture::on_step_end(const at::RecordFunction& fn) {
  wait_if_ending();
  markers_seen_.fetch_add(1, std::memory_order_relaxed);
  step_end_locked(fn);
  if (!hooks_.active()) hooks_.try_again();  // no step is open on this thread now
}

void Capture::on_hook_step_end() {
  if (dead() || rf_counting_.load()) return;
  wait_if_ending();
  markers_seen_.fetch_add(1, std::memory_order_relaxed);
  CaptureLock lock(mutex_);
  if (!window_ || exiting_.load()) return;
  // A window that a signal or the memory cap ended while the job's
  // profiler ran: the steps after it are counted here.
  release_cupti_if_profiler_stopped();
  if (window_done_ || rf_counting_.load()) return;
  stepping_tid_.store(os_tid(), std::memory_order_relaxed);
  before_step_end_locked();
  // Not armed (the step callback would count otherwise): no op-span
  // callback, so the boundary acts now, inside the Optimizer.step record.
  apply(window_->step_ended(), now_ns(), os_tid());
}

void Capture::on_hooks_registered() {
  CaptureLock lock(mutex_);
  if (armed_ || step_handle_ == at::INVALID_CALLBACK_HANDLE) return;
  at::removeCallback(step_handle_);
  step_handle_ = at::INVALID_CALLBACK_HANDLE;
  rf_counting_.store(false);
  // Whether the job trains at all is still wanted until a backward ran.
  if (!saw_backward_.load()) backward_watch_.store(register_backward_watch());
  log_debug("steps are counted by torch.optim's step hooks: no callback of ours runs per op");
}

void Capture::note_backward() {
  // A forked child never touches torch's callback table (on_forked_child).
  if (dead() || saw_backward_.exchange(true, std::memory_order_relaxed)) return;
  hooks_.try_again();
  // Its job is done: removed here, on whichever thread ran the backward
  // function (torch's callback table has its own lock; ours is not held).
  const at::CallbackHandle watch = backward_watch_.exchange(at::INVALID_CALLBACK_HANDLE);
  if (watch != at::INVALID_CALLBACK_HANDLE) at::removeCallback(watch);
}

void Capture::step_end_locked(const at::RecordFunction& fn) {
  CaptureLock lock(mutex_);
  if (!window_ || exiting_.load()) return;
  release_cupti_if_profiler_stopped();
  if (window_done_) return;
  stepping_tid_.store(os_tid(), std::memory_order_relaxed);
  before_step_end_locked();
  const window::Boundary b = window_->step_ended();
  if (op_span_handle_ != at::INVALID_CALLBACK_HANDLE && fn.handle() != 0) {
    pending_ = Pending{fn.handle(), b, os_tid()};
    pending_handle_.store(fn.handle(), std::memory_order_release);
    return;
  }
  apply(b, now_ns(), os_tid());
}

void Capture::on_op_end(const at::RecordFunction& fn, std::int64_t end_ns) {
  // The native recorder's end callback runs after ours, and calls
  // on_recorder_op_end then.
  if (EtRecorder::instance().ends_ops()) return;
  run_pending_boundary(fn, end_ns);
}

void Capture::on_recorder_op_end(const at::RecordFunction& fn) {
  if (dead()) return;
  const at::RecordFunctionHandle handle = fn.handle();
  if (handle == 0 || pending_handle_.load(std::memory_order_acquire) != handle) return;
  run_pending_boundary(fn, now_ns());
}

void Capture::et_enable() {
  if (et_native_) EtRecorder::instance().enable();
  else et_.enable();
}

void Capture::et_disable() {
  if (et_native_) EtRecorder::instance().disable();
  else et_.disable();
}

void Capture::et_remove() {
  if (et_native_) EtRecorder::instance().remove();
  else et_.remove();
}

bool Capture::et_enabled() const {
  return et_native_ ? EtRecorder::instance().enabled() : et_.enabled();
}

void Capture::run_pending_boundary(const at::RecordFunction& fn, std::int64_t end_ns) {
  const at::RecordFunctionHandle handle = fn.handle();
  if (handle == 0 || pending_handle_.load(std::memory_order_acquire) != handle) return;
  CaptureLock lock(mutex_);
  if (!pending_ || pending_->handle != handle) return;
  const Pending p = *pending_;
  pending_.reset();
  pending_handle_.store(0, std::memory_order_release);
  apply(p.boundary, end_ns, p.tid);
}

void Capture::apply(const window::Boundary& b, std::int64_t now, std::uint64_t tid) {
  if (b.ended && b.ended_phase == window::Phase::active && armed_) {
    steps_.push_back(StepSpan{*b.ended, 0, static_cast<std::int64_t>(tid), step_start_ns_, now,
                              next_external_id()});
  }
  step_start_ns_ = now;
  if (armed_) stand_back_if_profiler_started();
  if (b.end_active) {
    keeping_.store(false, std::memory_order_release);
    et_recording_.store(false);
    et_generation_.fetch_add(1);
    et_disable();
  }
  if (b.disarm) {
    if (armed_) disarm("end_step", std::nullopt);
    else plan_next_window_locked();  // its arm failed (said): the next one may not
  }
  if (b.arm) arm();
  if (b.begin_active && armed_) {
    keeping_.store(device_on_, std::memory_order_release);
    et_enable();
    et_generation_.fetch_add(1);
    et_recording_.store(et_enabled());
    // The ET records: the watch thread writes its process-group node now
    // from the answer it has (asked at the step before the window, or in an
    // earlier window), not at the next answer, which comes a second later,
    // after a short window (issue #34).
    if (et_recording_.load()) distributed_.replay();
  }
  // The watch thread asks torch.distributed (a group may appear at any
  // step); its answer lands in on_distributed_answer.
  if (armed_) distributed_.request();
  // The window begins at the next boundary: get it ready now.
  if (!armed_ && window_planned_ && !window_done_ && !exiting_.load() &&
      b.current + 1 == window_->schedule().start)
    prepare_locked();
}

std::optional<files::Layout> Capture::window_folders(bool host, bool device, std::string& error,
                                                     bool choose_only) {
  chakrashim_capture_config window_config = config_;
  std::string window_root;  // many windows: each a capture folder of its own, by its first step
  if (plan_->many_windows()) {
    window_root = config_.trace_dir;
    while (window_root.size() > 1 && window_root.back() == '/') window_root.pop_back();
    window_root += "/" + window::window_folder_name(window_->schedule().start);
    window_config.trace_dir = window_root.c_str();
  }
  return choose_only ? choose_folders(window_config, error)
                     : prepare_folders(window_config, host, device, error);
}

void Capture::prepare_locked() {
  const std::uint64_t start = window_->schedule().start;
  if (prepared_ && prepared_->start == start) return;
  discard_prepared_locked();
  // Asked first: the watch thread asks Python while this thread goes on.
  distributed_.new_window();
  distributed_.request();
  Prepared p;
  p.start = start;
  // As arm decides, quietly: arm says why the ET is skipped, and prepares
  // again if its decision differs.
  p.host = config_.host_trace != 0 && !EtObserver::someone_else_observing();
  p.device = config_.device_trace != 0;
  std::string error;
  p.folders = window_folders(p.host, p.device, error, /*choose_only=*/true);
  // dlopen(RTLD_NOLOAD) of libcuda searches the library path when it is not
  // loaded: a few hundred microseconds on a CPU job. A job that first loads
  // CUDA in this very step has its window captured without the GPU side.
  if (p.device) p.cuda = collector::Collector::cuda_present(collector_config());
  prepared_ = std::move(p);
}

void Capture::discard_prepared_locked() {
  // Nothing was made on disk (the folders are made at arm): only forgotten.
  prepared_.reset();
}

void Capture::on_distributed_answer(const std::string& json) {
  if (dead() || exiting_.load() || pg_node_written_.load() || !et_recording_.load()) return;
  const auto info = nlohmann::json::parse(json, nullptr, false);
  if (info.is_discarded() || !info.is_object() || !info.contains("pg_config")) return;
  // What torch's Python ExecutionTraceObserver.start() writes and its C++
  // enable does not: Chakra reads the process groups from this node (by
  // name; the thread does not matter). A USER_SCOPE record with the JSON as
  // its one input, recorded by the ET like any op. No lock of ours is held:
  // the record runs our own op-span callback too.
  const std::uint64_t generation = et_generation_.load();
  const std::string config = info["pg_config"].dump();
  {
    at::RecordFunction rf(at::RecordScope::USER_SCOPE);
    if (rf.isActive()) {
      const c10::IValue input(config);
      rf.before("## process_group:init ##", c10::ArrayRef<const c10::IValue>(&input, 1));
    }
  }
  // Written only if the ET recorded from before the record to after it.
  if (et_recording_.load() && et_generation_.load() == generation) pg_node_written_.store(true);
}

void Capture::release_cupti_if_profiler_stopped() {
  // One check per step, whichever counts it (the step callback or the
  // optimizer hooks): without it a window ended by a signal or the cap
  // would leave our kinds on for the rest of the job.
  if (cupti_release_pending_ && !torch_profiler_running()) {
    collector::Collector::instance().release_after_stand_back();
    cupti_release_pending_ = false;
  }
}

void Capture::stand_back_if_profiler_started() {
  if (!cupti_started_ || !torch_profiler_running()) return;
  collector::Collector::instance().stand_back();
  cupti_started_ = false;
  cupti_release_pending_ = true;
  cupti_state_ = "profiler_active";
  log_info("the job started torch.profiler in the capture window: chakrashim leaves CUPTI to it, "
           "and this window's device trace holds host ops only");
}

void Capture::arm() {
  // Attempted, whatever follows: a failed arm has said why, and the exit
  // must not add that the window was never reached.
  ever_armed_ = true;
  host_on_ = config_.host_trace != 0;
  device_on_ = config_.device_trace != 0;
  if (host_on_ && EtObserver::someone_else_observing()) {
    log_warn("an Execution Trace observer is already running in this process (the job's own); "
             "chakrashim leaves it alone and captures no ET");
    host_on_ = false;
    host_state_ = "skipped: the job runs its own ExecutionTraceObserver";
  }
  et_native_ = config_.et_native != 0;
  if (host_on_ && et_native_ &&
      (std::getenv("ENABLE_PYTORCH_EXECUTION_TRACE_SAVE_INTEGRAL_TENSOR_RANGE") ||
       std::getenv("ENABLE_PYTORCH_EXECUTION_TRACE_SAVE_INTEGRAL_TENSOR_DATA"))) {
    // Those read tensors' contents inside the op: torch's observer does it.
    log_info("ENABLE_PYTORCH_EXECUTION_TRACE_SAVE_INTEGRAL_TENSOR_* is set: torch's observer records "
             "the Execution Trace instead of chakrashim's (CHAKRA_ET_RECORDER=native)");
    et_native_ = false;
  }
  budget_.reset(config_.max_memory);
  // What the step before made ready, if it was for this window and as arm
  // decided (else undone, and done here).
  std::optional<Prepared> prepared = std::move(prepared_);
  prepared_.reset();
  if (prepared && (prepared->start != window_->schedule().start || prepared->host != host_on_ ||
                   prepared->device != device_on_ || !prepared->folders)) {
    prepared_ = std::move(prepared);
    discard_prepared_locked();
    prepared.reset();
  }
  if (!prepared) distributed_.new_window();  // else its first question was asked then
  spans_.set_budget(&budget_);
  cut_at_ns_.store(0);
  pg_node_written_.store(false);
  std::string error;
  layout_.reset();
  const bool overwrite = config_.overwrite != 0;
  if (prepared && make_folders(*prepared->folders, host_on_, device_on_, error) &&
      claim_outputs(*prepared->folders, host_on_, device_on_, overwrite, error))
    layout_ = prepared->folders;
  if (!layout_) {
    // Not prepared, or the prepared name cannot be claimed (taken since, or
    // its folder cannot be made): chosen and made again.
    layout_ = window_folders(host_on_, device_on_, error);
    if (layout_ && !claim_outputs(*layout_, host_on_, device_on_, overwrite, error)) layout_.reset();
  }
  if (!layout_) {
    log_error("cannot write traces under CHAKRA_TRACE_DIR=" + std::string(config_.trace_dir) + " (" +
              error + "); " +
              (plan_->many_windows() ? "this window is not captured" : "capture is off") +
              ", the job runs on");
    return;
  }
  if (host_on_ && et_native_) {
    // Nothing is open on the claimed .partial: the writer thread writes it.
    EtRecorder::instance().add(&budget_);
  } else if (host_on_ && !et_.add(files::partial_path(layout_->host_path), error)) {
    log_error(error + "; the ET is off, the device trace goes on");
    discard_outputs(*layout_, true, false);
    host_on_ = false;
    host_state_ = "failed: " + error;
  }
  {
    const auto& fds = et_.output_fds();
    for (int i = 0; i < kMaxEtFds; ++i)
      et_fds_[i].store(i < static_cast<int>(fds.size()) ? fds[i] : -1);
    if (host_on_ && !et_native_ && fds.empty())
      log_warn("cannot find the Execution Trace's descriptor: a child forked in the window could "
               "write into it (chakrashim check reports that as duplicate node ids)");
  }
  if (device_on_) start_device_collection(prepared ? prepared->cuda : std::nullopt);
  install_fork_guard();
  // After add: our exit hook must run before torch destroys its observer.
  std::atexit(&exit_hook);
  stepping_tid_.store(os_tid(), std::memory_order_relaxed);
  if (step_handle_ == at::INVALID_CALLBACK_HANDLE) {
    // Registered inside the Optimizer.step record that armed: that record's
    // end is not in its snapshot, so the step is not counted twice.
    step_handle_ = register_step_callback();
    rf_counting_.store(true);
  }
  op_span_handle_ = register_op_span_callback();
  if (host_on_ && et_native_) {
    // After the op-span callback: its end callback runs after the span's
    // end, and then runs the deferred boundary (on_recorder_op_end).
    EtRecorder::set_after_end([](const at::RecordFunction& fn) {
      Capture::instance().on_recorder_op_end(fn);
    });
    EtRecorder::instance().add_end_callback();
  }
  if (!signals_.start(kSignalGrace, [this](int sig) { finalize_for_signal(sig); },
                      [this] { wait_for_writer(); })) {
    log_warn("cannot watch for SIGTERM/SIGINT in the window: a signal would lose the traces");
  }
  armed_ = true;
  log_debug("armed at step " + std::to_string(window_->current()));
}

void Capture::disarm(const std::string& why, std::optional<std::uint64_t> partial_step) {
  if (!armed_) return;
  std::string reason = why;
  armed_ = false;
  window_done_ = true;
  // The relay's watcher restores the job's dispositions and delivers what
  // was recorded, once the files are written. Told last, at scope exit,
  // once the writer runs: told here, it waited for a writer not yet
  // started, put SIGTERM's default back while the files were still being
  // made, and a SIGTERM that the job got right after its last window step
  // killed it with both files left .partial.
  struct StopRelayAtEnd {
    SignalRelay& relay;
    ~StopRelayAtEnd() { relay.stop(); }
  } stop_relay_at_end{signals_};
  keeping_.store(false, std::memory_order_release);
  et_recording_.store(false);
  et_generation_.fetch_add(1);
  if (!et_native_ && et_.added() && spans_.threads() > 1) {
    // torch's disable is a flag, and its remove writes the file's tail
    // without the lock its callbacks write under: an op that another thread
    // started just before the disable could still be writing its node (a
    // race TSan showed on a job with a second thread running ops). Ops take
    // microseconds; let theirs finish. Only when other threads ran ops.
    et_.disable();
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  et_remove();
  for (auto& fd : et_fds_) fd.store(-1);
  at::removeCallback(op_span_handle_);
  op_span_handle_ = at::INVALID_CALLBACK_HANDLE;
  if (hooks_.active() && step_handle_ != at::INVALID_CALLBACK_HANDLE) {
    // At the end of the marker record that ended the window: the step
    // callback already saw it. The hooks count from here.
    at::removeCallback(step_handle_);
    step_handle_ = at::INVALID_CALLBACK_HANDLE;
    rf_counting_.store(false);
  }
  pending_.reset();
  pending_handle_.store(0, std::memory_order_release);
  DeviceCapture device = stop_device_collection();
  // The budget can be filled after the stepping thread's last look: by the
  // decode thread between that op and the last boundary, or by the records
  // that CUPTI delivers only at stop's flush (it completes a buffer when it
  // is full; the last ones, or every one of a short window, come in that
  // flush). Those records are cut where the budget ran out (truncated_at,
  // dropped_records) as they would have been in mid-window: the window is
  // cut by the memory cap however fast the records were drained, and says
  // so, once. A window that ended early anyway (a signal, the exit) keeps
  // that reason; the line is said still.
  const bool cut_by_memory = reason != "memory_cap" && budget_.exhausted();
  if (cut_by_memory) {
    log_warn("CHAKRA_MAX_MEMORY=" + std::to_string(config_.max_memory) +
             " bytes reached by the window's records as it ended: the trace is cut where the cap was "
             "reached; raise it, or capture fewer steps");
    if (reason == "end_step") reason = "memory_cap";
  }

  const window::Cut cut = window_->cut();
  WindowOutput out;
  out.layout = *layout_;
  out.host = host_on_;
  out.et_native = host_on_ && et_native_;
  if (out.et_native) out.et_records = EtRecorder::instance().take();
  out.device = device_on_;
  out.overwrite = config_.overwrite != 0;
  out.gzip = config_.gzip != 0;
  out.spans = spans_.take_all();
  out.device_capture = std::move(device);
  out.steps = std::move(steps_);
  steps_.clear();
  out.exe_name = config_.exe_name ? config_.exe_name : "";
  out.pid = static_cast<std::int64_t>(::getpid());
  for (auto& s : out.steps) s.pid = out.pid;
  out.header.distributed.rank = config_.rank;
  if (config_.world_size >= 0)
    out.header.distributed.world_size = static_cast<std::uint64_t>(config_.world_size);
  auto& t = out.trailer;
  t.world_size = out.header.distributed.world_size;
  // torch.distributed's state as known now, never waited for here (issue
  // #34: the watch asks at most once a second, so a wait at the end of a
  // shorter window always ran out, 50 ms on every rank, every window). The
  // answer asked at the step before the window, or in an earlier one; before
  // the process's first answer, the writer thread waits for it, bounded.
  if (distributed_.ever_answered()) {
    distributed_.stop();
    if (const auto json = distributed_.latest()) set_distributed_info(out, *json);
  } else {
    distributed_.finish();
    out.await_distributed = [this]() -> std::optional<std::string> {
      // Not past a recorded terminating signal: the job is to die of it
      // once the files are written.
      if (!SignalRelay::terminating_recorded())
        distributed_.wait_answered(std::chrono::milliseconds(1000));
      return distributed_.latest();
    };
  }
  t.trace_name = layout_->device_path;
  t.version = CHAKRASHIM_VERSION;
  t.torch_version = built_torch_version();
  const window::Schedule& schedule = window_->schedule();
  t.steps.start = schedule.start;
  t.steps.end = schedule.end;
  t.steps.warmup = schedule.warmup;
  t.steps.active = schedule.active;
  for (const auto& s : out.steps)
    if (!partial_step || s.step != *partial_step) t.steps.captured.push_back(s.step);
  t.steps.cut_short = (cut.cut_short && reason != "end_step") || cut_by_memory;
  t.steps.partial_last_step = partial_step;
  t.steps.reason = reason;
  if (config_.ranks_filter) t.ranks_filter = config_.ranks_filter;
  t.host_trace = host_on_ ? "on" : (config_.host_trace ? host_state_ : "off");
  t.cupti = device_on_ ? cupti_state_ : "disabled";
  if (const std::int64_t cut = cut_at_ns_.load()) t.truncated_at_ns = cut;
  t.device_sync = out.device_capture.device_sync;
  writer_.start(std::move(out));
  if (!exiting_.load()) plan_next_window_locked();
}

void Capture::before_step_end_locked() {
  if (!on_demand()) return;
  // The first completed step: a process that never steps never looks.
  if (!triggers_.started()) start_trigger_watch_locked();
  triggers_.note_step(window_->current() + 1);
  if (triggers_.has_triggers() || TriggerSignal::pending()) take_requests_locked();
}

void Capture::start_trigger_watch_locked() {
  TriggerWatch::Params p;
  p.trace_dir = config_.trace_dir;
  p.job_id = config_.job_id;
  // The lowest rank that captures publishes the step.
  std::uint64_t publisher = 0;
  if (config_.ranks_filter) {
    if (const auto set = config::parse_rank_list(config_.ranks_filter)) {
      publisher = UINT64_MAX;
      for (const auto& [lo, hi] : set->ranges()) publisher = std::min(publisher, lo);
    }
  }
  p.publisher = config_.rank == publisher;
  auto& n = p.note;
  n.job_id = config_.job_id;
  n.rank = config_.rank;
  n.pid = static_cast<std::int64_t>(::getpid());
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) == 0) n.host = host;
  n.restart = config_.restart_count;
  n.world_size = config_.world_size;
  if (config_.ranks_filter) n.ranks = config_.ranks_filter;
  n.warmup = config_.warmup_steps;
  n.gzip = config_.gzip != 0;
  triggers_.start(std::move(p));
}

void Capture::take_requests_locked() {
  for (const auto& [name, t] : triggers_.take()) {
    if (t.restart != config_.restart_count) {
      log_info("the trigger " + name + " is for restart " + std::to_string(t.restart) +
               " of the job, and this is restart " + std::to_string(config_.restart_count) +
               ": ignored");
      continue;
    }
    request_window_locked(t.first_step, t.steps, "the trigger " + name);
  }
  if (TriggerSignal::take()) {
    request_window_locked(window_->current() + 1, config_.trigger_steps,
                          signal_name(config_.trigger_signal) + " (CHAKRA_TRIGGER_SIGNAL)");
  }
  if (!window_planned_) plan_next_window_locked();
}

void Capture::request_window_locked(std::uint64_t first_step, std::uint64_t steps,
                                    const std::string& origin) {
  const std::uint64_t current = window_->current();
  const auto out = plan_->request(first_step, steps, current,
                                  window_planned_ ? std::optional(window_->schedule()) : std::nullopt);
  const std::string asked = origin + " asks for steps " + window::steps_text(out.window);
  switch (out.verdict) {
    case window::Verdict::queued:
      log_info(asked + ": they go to " + std::string(config_.trace_dir) + "/" +
               window::window_folder_name(out.window.start) + "/");
      break;
    case window::Verdict::past: {
      const std::string why = asked + ", but this rank is at step " + std::to_string(current) +
                              " already: it captures nothing for it (trigger further ahead, e.g. a "
                              "larger --in)";
      log_warn(why);
      triggers_.note_missed(window::Missed{out.window.start, config_.rank, why});
      break;
    }
    case window::Verdict::overlaps: {
      const bool open = armed_ && out.conflict && window_planned_ &&
                        out.conflict->start == window_->schedule().start;
      const std::string why = asked + ": refused, it overlaps the window of steps " +
                              window::steps_text(*out.conflict) + (open ? ", open now" : ", planned") +
                              "; trigger again for steps after " + std::to_string(out.conflict->end);
      log_warn(why);
      triggers_.note_missed(window::Missed{out.window.start, config_.rank, why});
      break;
    }
  }
}

void Capture::plan_next_window_locked() {
  std::vector<window::Schedule> missed;
  const auto next = plan_->next(window_->current(), &missed);
  for (const auto& m : missed) {
    const std::string why = "the window of steps " + window::steps_text(m) +
                            " could not begin: this rank was at step " +
                            std::to_string(window_->current()) + " when the window before it ended";
    log_warn(why);
    triggers_.note_missed(window::Missed{m.start, config_.rank, why});
  }
  if (next) {
    window_->replan(*next);
    window_planned_ = true;
    window_done_ = false;
    log_debug("next window: steps " + window::steps_text(*next));
    return;
  }
  window_planned_ = false;
  if (on_demand()) {
    window_->replan(window::WindowPlan::never());
    window_done_ = false;
  } else {
    window_done_ = true;
  }
}

void Capture::at_exit() {
  if (dead() || exiting_.exchange(true)) return;
  distributed_.stop_for_exit();  // Python is finalized: never ask it again
  // No job publishes its step here any more; the clean-up is the watch
  // thread's, waited for briefly (a hung filesystem must not hold the exit).
  triggers_.stop_for_exit(std::min(std::chrono::milliseconds(2000),
                                   std::chrono::milliseconds(1000 * config_.exit_timeout_s)));
  CaptureLock lock(mutex_);
  if (!window_) return;
  discard_prepared_locked();  // the job ended in the step before a window
  if (!ever_armed_) {
    // On demand, no window until asked is the normal case.
    if (!on_demand()) warn_if_never_armed();
    return;
  }
  if (armed_) {
    if (markers_seen_.load() == 0 && steps_.empty()) {
      // START=0 in a process that never completed a step (a launcher, a
      // worker): leave nothing behind (docs/design.md section 3).
      armed_ = false;
      et_remove();
      at::removeCallback(op_span_handle_);
      stop_device_collection();
      discard_outputs(*layout_, host_on_, device_on_);
      return;
    }
    disarm("exit", close_partial_step());
  }
  wait_for_writer();
  // A signal recorded just before exit is delivered now, not by a watcher
  // the exit would outrun.
  signals_.close_now();
}

void Capture::wait_for_writer() {
  if (!writer_.wait(config_.exit_timeout_s) && !writer_late_said_.exchange(true)) {
    log_error("the trace writer did not finish within CHAKRA_EXIT_TIMEOUT=" +
              std::to_string(config_.exit_timeout_s) + " s; its files stay .partial");
  }
}

std::optional<std::uint64_t> Capture::close_partial_step(bool force) {
  const window::Cut cut = window_->cut();
  if (cut.phase != window::Phase::active || (!keeping_.load() && !force)) return std::nullopt;
  steps_.push_back(StepSpan{cut.current, 0,
                            static_cast<std::int64_t>(stepping_tid_.load() ? stepping_tid_.load()
                                                                           : os_tid()),
                            step_start_ns_, now_ns(), next_external_id()});
  return cut.current;
}

void Capture::add_span(SpanStore::ThreadBuffer& buffer, const SpanRecord& span) {
  // Called only for an op that began while spans were kept. Its span is
  // kept even past CHAKRA_MAX_MEMORY (another store, the GPU side say, may
  // have reached it while the op ran): torch's ET exit callback may have
  // run before ours and written this op's node, and every ET
  // node must find its span (the rf_id join). Seen under TSan: one ET node
  // in 50 without its span when the decode thread filled the budget.
  if (!spans_.add(buffer, span)) spans_.add(buffer, span, /*past_cap=*/true);
  if (cut_requested()) {
    // Over CHAKRA_MAX_MEMORY: no op that starts from now on is kept, the ET
    // stops now too (else it records on, on every thread, until the
    // stepping thread's next op, which may be seconds away), and the
    // stepping thread cuts the window at its next op.
    keeping_.store(false, std::memory_order_release);
    std::int64_t none = 0;
    if (cut_at_ns_.compare_exchange_strong(none, span.start_ns)) stop_et_for_cut();
  }
}

void Capture::stop_et_for_cut() {
  if (this_thread_holds_lock()) return;  // a disarm of ours is under way
  CaptureLock lock(mutex_);
  if (!armed_ || !et_enabled()) return;
  et_recording_.store(false);
  et_generation_.fetch_add(1);
  et_disable();
}

void Capture::on_cut_requested() {
  if (os_tid() != stepping_tid_.load(std::memory_order_relaxed)) return;
  CaptureLock lock(mutex_);
  if (!armed_) return;
  std::int64_t none = 0;
  cut_at_ns_.compare_exchange_strong(none, now_ns());  // the GPU side hit it first
  log_warn("CHAKRA_MAX_MEMORY=" + std::to_string(config_.max_memory) +
           " bytes reached in step " + std::to_string(window_->current()) +
           ": the window is cut here; raise it, or capture fewer steps");
  disarm("memory_cap", close_partial_step(/*force=*/true));
}

void Capture::finalize_for_signal(int sig) {
  {
    CaptureLock lock(mutex_);
    if (!armed_) return;
    disarm("signal:" + signal_name(sig), close_partial_step());
  }
  // A terminating signal ends the process next: the files must be done
  // first, and the job must not run on meanwhile.
  if (SignalRelay::terminating_recorded()) wait_for_writer();
}

void Capture::on_forked_child() {
  dead_.store(true, std::memory_order_relaxed);
  spans_.forget_in_forked_child();
  signals_.reset_in_forked_child();
  TriggerSignal::reset_in_forked_child();
  const int devnull = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  if (devnull >= 0) {
    for (auto& slot : et_fds_) {
      const int fd = slot.load(std::memory_order_relaxed);
      if (fd >= 0) ::dup2(devnull, fd);
    }
    ::close(devnull);
  }
  et_.silence_in_forked_child();
  EtRecorder::instance().silence_in_forked_child();
  // Our callbacks stay registered and return at once (dead_): removing
  // them takes torch's callback-registry mutex, which another thread of the
  // parent may have held at fork, and the child then hung here forever
  // (issue #34). The cost is torch's RecordFunction work for them on the
  // child's ops.
}

collector::CollectorConfig Capture::collector_config() {
  collector::CollectorConfig cc;
  if (config_.cupti_lib) cc.cupti_lib = config_.cupti_lib;
  if (const char* home = std::getenv("CUDA_HOME")) cc.cuda_home = home;
  else if (const char* path = std::getenv("CUDA_PATH")) cc.cuda_home = path;
  cc.buffer_bytes = config_.cupti_buffers;
  cc.budget = &budget_;
  cc.sync_records = config_.cupti_sync != 0;
  cc.overhead_records = config_.cupti_overhead != 0;
  return cc;
}

void Capture::start_device_collection(std::optional<bool> cuda) {
  const collector::CollectorConfig cc = collector_config();
  if (!(cuda ? *cuda : collector::Collector::cuda_present(cc))) {
    cupti_state_ = "absent";  // said once, in the summary line
    return;
  }
  // The job's own torch.profiler owns CUPTI: two users of the Activity API
  // would steal each other's buffers.
  if (torch_profiler_running()) {
    cupti_state_ = "profiler_active";
    log_info("torch.profiler is running in this process: chakrashim leaves CUPTI to it, and the "
             "device trace holds host ops only");
    return;
  }
  const auto outcome = collector::Collector::instance().start(cc);
  cupti_state_ = outcome.status;
  cupti_started_ = outcome.status == "ok";
  if (!outcome.message.empty()) log_info(outcome.message);
}

DeviceCapture Capture::stop_device_collection() {
  // Every way a window ends comes here (its end step, a signal, the memory
  // cap, exit): a torch.profiler that the job started since the last step
  // boundary shares CUPTI with us now, and a disable and flush would pull
  // its activity kinds and buffers from under it. Only the end step's
  // boundary used to ask.
  stand_back_if_profiler_started();
  if (!cupti_started_) return DeviceCapture{};
  cupti_started_ = false;
  // Bounded: a device stuck in a collective must not keep the job from
  // finalizing and dying of its SIGTERM.
  DeviceCapture capture = collector::Collector::instance().stop(
      std::chrono::milliseconds(config_.exit_timeout_s * 1000));
  capture.cupti = cupti_state_;
  return capture;
}

void Capture::warn_if_never_armed() {
  const std::uint64_t markers = markers_seen_.load();
  if (markers > 0) {
    log_warn("the window was never reached: the job completed " + std::to_string(markers) +
             " optimizer steps, and capture starts at CHAKRA_START_STEP=" +
             std::to_string(config_.start_step) + " (steps count from 0)");
  } else if (optimizer_records_seen_.load() > 0) {
    log_warn("no step marker '" + marker_ +
             "' was seen, though the job ran optimizer records: a torch.compile'd optimizer "
             "step has none; set CHAKRA_STEP_MARKER to a record that ends each step");
  } else if (saw_backward_.load()) {
    log_warn("the job ran autograd backward passes but no optimizer step ('" + marker_ +
             "'): chakrashim counts steps by torch.optim steps, so nothing was captured; for a "
             "job that updates its weights another way, wrap each step in "
             "torch.profiler.record_function(\"train_step\") and set CHAKRA_STEP_MARKER=train_step");
  }
}

}  // namespace chakrashim::bridge
