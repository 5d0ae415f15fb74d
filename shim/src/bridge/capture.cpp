#include "bridge/capture.h"

#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <new>
#include <thread>

#include "bridge/bridge_log.h"
#include "bridge/callbacks.h"
#include "bridge/fork_guard.h"
#include "bridge/python_query.h"
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

Capture& Capture::instance() {
  // Never destroyed: exit hooks and callbacks on other threads may still
  // reach it while static destructors run.
  alignas(Capture) static unsigned char storage[sizeof(Capture)];
  static Capture* capture = new (storage) Capture();
  return *capture;
}

void Capture::attach(const chakrashim_capture_config& config) {
  attach_locked(config);
  refresh_distributed_if_wanted();
}

void Capture::attach_locked(const chakrashim_capture_config& config) {
  std::lock_guard<std::mutex> lock(mutex_);
  config_ = config;
  marker_ = config.step_marker ? config.step_marker : "Optimizer.step#";
  window_.emplace(window::Schedule{config.start_step, config.end_step, config.warmup_steps,
                                   config.active_steps});
  register_step_callback();
  // The exit hook that warns about a window never reached; the one that
  // finalizes an armed window is registered again after the ET's add, so
  // that it runs before torch destroys the observer (section 4.8).
  std::atexit(&exit_hook);
  apply(window_->attach(), now_ns(), os_tid());
}

void Capture::count_user_record(const char* name) {
  if (name && std::strncmp(name, "Optimizer.", 10) == 0)
    optimizer_records_seen_.fetch_add(1, std::memory_order_relaxed);
}

void Capture::on_step_end(const at::RecordFunction& fn) {
  markers_seen_.fetch_add(1, std::memory_order_relaxed);
  step_end_locked(fn);
  refresh_distributed_if_wanted();
}

void Capture::step_end_locked(const at::RecordFunction& fn) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!window_ || exiting_.load() || window_done_) return;
  stepping_tid_.store(os_tid(), std::memory_order_relaxed);
  const window::Boundary b = window_->step_ended();
  if (op_span_handle_ != at::INVALID_CALLBACK_HANDLE && fn.handle() != 0) {
    pending_ = Pending{fn.handle(), b, os_tid()};
    pending_handle_.store(fn.handle(), std::memory_order_release);
    return;
  }
  apply(b, now_ns(), os_tid());
}

void Capture::on_op_end(const at::RecordFunction& fn, std::int64_t end_ns) {
  const at::RecordFunctionHandle handle = fn.handle();
  if (handle == 0 || pending_handle_.load(std::memory_order_acquire) != handle) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!pending_ || pending_->handle != handle) return;
    const Pending p = *pending_;
    pending_.reset();
    pending_handle_.store(0, std::memory_order_release);
    apply(p.boundary, end_ns, p.tid);
  }
  refresh_distributed_if_wanted();
}

void Capture::apply(const window::Boundary& b, std::int64_t now, std::uint64_t tid) {
  if (b.ended && b.ended_phase == window::Phase::active && armed_) {
    steps_.push_back(StepSpan{*b.ended, 0, static_cast<std::int64_t>(tid), step_start_ns_, now,
                              next_external_id()});
  }
  step_start_ns_ = now;
  if (b.end_active) {
    keeping_.store(false, std::memory_order_release);
    et_.disable();
  }
  if (b.disarm) disarm("end_step", std::nullopt);
  if (b.arm) arm();
  if (b.begin_active && armed_) {
    keeping_.store(device_on_, std::memory_order_release);
    et_.enable();
  }
  if (armed_) refresh_wanted_.store(true);
}

void Capture::refresh_distributed_if_wanted() {
  if (!refresh_wanted_.exchange(false) || exiting_.load()) return;
  auto fresh = distributed_info_json();  // no lock held: it may wait for the GIL
  std::lock_guard<std::mutex> lock(mutex_);
  if (fresh) distributed_json_ = std::move(fresh);
  if (!armed_ || pg_node_written_ || !et_.enabled() || !distributed_json_) return;
  const auto info = nlohmann::json::parse(*distributed_json_, nullptr, false);
  if (info.is_discarded() || !info.contains("pg_config")) return;
  // What torch's Python ExecutionTraceObserver.start() writes and its C++
  // enable does not: Chakra reads the process groups from this node. A
  // USER_SCOPE record with the JSON as its one input; torch's ET callback
  // records it like any op.
  const std::string config = info["pg_config"].dump();
  {
    at::RecordFunction rf(at::RecordScope::USER_SCOPE);
    if (rf.isActive()) {
      const c10::IValue input(config);
      rf.before("## process_group:init ##", c10::ArrayRef<const c10::IValue>(&input, 1));
    }
  }
  pg_node_written_ = true;
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
  std::string error;
  layout_ = prepare_outputs(config_, host_on_, device_on_, error);
  if (!layout_) {
    log_error("cannot write traces (" + error + "); capture is off, the job runs on");
    return;
  }
  if (host_on_ && !et_.add(files::partial_path(layout_->host_path), error)) {
    log_error(error + "; the ET is off, the device trace goes on");
    discard_outputs(*layout_, true, false);
    host_on_ = false;
    host_state_ = "failed: " + error;
  }
  et_fd_.store(et_.output_fd());
  if (device_on_) start_device_collection();
  install_fork_guard();
  // After add: our exit hook must run before torch destroys its observer.
  std::atexit(&exit_hook);
  stepping_tid_.store(os_tid(), std::memory_order_relaxed);
  op_span_handle_ = register_op_span_callback();
  if (!signals_.start(config_.flush_signal, kSignalGrace,
                      [this](int sig) { finalize_for_signal(sig); })) {
    log_warn("cannot watch for SIGTERM/SIGINT in the window: a signal would lose the traces");
  }
  armed_ = true;
  log_debug("armed at step " + std::to_string(window_->current()));
}

void Capture::disarm(const std::string& reason, std::optional<std::uint64_t> partial_step,
                     bool from_signal) {
  if (!armed_) return;
  armed_ = false;
  window_done_ = true;
  // After a signal the watcher restores the dispositions itself, once it
  // has delivered the signal again.
  if (!from_signal) signals_.stop();
  keeping_.store(false, std::memory_order_release);
  if (et_.added() && spans_.threads() > 1) {
    // torch's disable is a flag, and its remove writes the file's tail
    // without the lock its callbacks write under: an op that another thread
    // started just before the disable could still be writing its node (a
    // race TSan showed on a job with a second thread running ops). Ops take
    // microseconds; let theirs finish. Only when other threads ran ops.
    et_.disable();
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  et_.remove();
  et_fd_.store(-1);
  at::removeCallback(op_span_handle_);
  op_span_handle_ = at::INVALID_CALLBACK_HANDLE;
  pending_.reset();
  pending_handle_.store(0, std::memory_order_release);
  DeviceCapture device = stop_device_collection();

  const window::Cut cut = window_->cut();
  WindowOutput out;
  out.layout = *layout_;
  out.host = host_on_;
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
  if (distributed_json_) {
    const auto info = nlohmann::json::parse(*distributed_json_, nullptr, false);
    auto& d = out.header.distributed;
    if (info.is_object()) {
      if (info.contains("backend") && info["backend"].is_string()) d.backend = info["backend"];
      if (info.contains("world_size") && info["world_size"].is_number_unsigned())
        d.world_size = info["world_size"].get<std::uint64_t>();
      if (info.contains("pg_count") && info["pg_count"].is_number_unsigned())
        d.pg_count = info["pg_count"].get<std::uint64_t>();
      if (info.contains("pg_config")) d.pg_config_json = info["pg_config"].dump();
    }
  }
  auto& t = out.trailer;
  t.trace_name = layout_->device_path;
  t.version = CHAKRASHIM_VERSION;
  t.torch_version = CHAKRA_TORCH_VERSION;
  t.steps.start = config_.start_step;
  t.steps.end = config_.end_step;
  t.steps.warmup = config_.warmup_steps;
  t.steps.active = config_.active_steps;
  for (const auto& s : out.steps)
    if (!partial_step || s.step != *partial_step) t.steps.captured.push_back(s.step);
  t.steps.cut_short = cut.cut_short && reason != "end_step";
  t.steps.partial_last_step = partial_step;
  t.steps.reason = reason;
  if (config_.ranks_filter) t.ranks_filter = config_.ranks_filter;
  t.world_size = out.header.distributed.world_size;
  t.host_trace = host_on_ ? "on" : (config_.host_trace ? host_state_ : "off");
  t.cupti = device_on_ ? cupti_state_ : "disabled";
  if (const std::int64_t cut = cut_at_ns_.load()) t.truncated_at_ns = cut;
  writer_.start(std::move(out));
}

void Capture::at_exit() {
  if (dead() || exiting_.exchange(true)) return;
  std::lock_guard<std::mutex> lock(mutex_);
  if (!window_) return;
  if (!ever_armed_) {
    warn_if_never_armed();
    return;
  }
  if (armed_) {
    if (markers_seen_.load() == 0 && steps_.empty()) {
      // START=0 in a process that never completed a step (a launcher, a
      // worker): leave nothing behind (DESIGN.md section 3).
      armed_ = false;
      et_.remove();
      at::removeCallback(op_span_handle_);
      stop_device_collection();
      discard_outputs(*layout_, host_on_, device_on_);
      return;
    }
    disarm("exit", close_partial_step());
  }
  wait_for_writer();
}

void Capture::wait_for_writer() {
  if (!writer_.wait(config_.exit_timeout_s)) {
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

void Capture::add_span(HostSpan&& span) {
  if (cut_requested()) return;
  spans_.add(span);
  if (spans_.bytes() >= config_.max_memory) {
    std::int64_t none = 0;
    cut_at_ns_.compare_exchange_strong(none, now_ns());
    keeping_.store(false, std::memory_order_release);
  }
}

void Capture::on_cut_requested() {
  if (os_tid() != stepping_tid_.load(std::memory_order_relaxed)) return;
  std::lock_guard<std::mutex> lock(mutex_);
  if (!armed_) return;
  log_warn("CHAKRA_MAX_MEMORY=" + std::to_string(config_.max_memory) +
           " bytes reached in step " + std::to_string(window_->current()) +
           ": the window is cut here; raise it, or capture fewer steps");
  disarm("memory_cap", close_partial_step(/*force=*/true));
}

void Capture::finalize_for_signal(int sig) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!armed_) return;
    disarm("signal:" + signal_name(sig), close_partial_step(), /*from_signal=*/true);
  }
  // A terminating signal ends the process next: the files must be done.
  if (sig == SIGTERM || sig == SIGINT) wait_for_writer();
}

void Capture::start_device_collection() {
  collector::CollectorConfig cc;
  if (config_.cupti_lib) cc.cupti_lib = config_.cupti_lib;
  if (const char* home = std::getenv("CUDA_HOME")) cc.cuda_home = home;
  else if (const char* path = std::getenv("CUDA_PATH")) cc.cuda_home = path;
  cc.buffer_bytes = config_.cupti_buffers;
  cc.event_bytes = config_.max_memory;
  cc.sync_records = config_.cupti_sync != 0;
  cc.overhead_records = config_.cupti_overhead != 0;
  if (!collector::Collector::cuda_present(cc)) {
    cupti_state_ = "absent";  // said once, in the summary line
    return;
  }
  // The job's own torch.profiler owns CUPTI: two users of the Activity API
  // would steal each other's buffers.
  if (torch::autograd::profiler::isProfilerEnabledInMainThread() ||
      torch::profiler::impl::profilerEnabled()) {
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
  if (!cupti_started_) return DeviceCapture{};
  cupti_started_ = false;
  DeviceCapture capture = collector::Collector::instance().stop();
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
  }
}

}  // namespace chakrashim::bridge
