#include "bridge/capture.h"

#include <fcntl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <new>

#include "bridge/bridge_log.h"
#include "bridge/callbacks.h"
#include "bridge/capture_lock.h"
#include "bridge/engine_steps.h"
#include "bridge/python_exit.h"
#include "bridge/fork_guard.h"
#include "chakrashim/immortal.h"

#include <nlohmann/json.hpp>

namespace chakrashim::bridge {

std::uint64_t os_tid() {
  thread_local const std::uint64_t tid = static_cast<std::uint64_t>(::syscall(SYS_gettid));
  return tid;
}

std::int64_t monotonic_ns() {
  timespec ts;
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

std::int64_t now_ns() {
  // CLOCK_REALTIME: Kineto's host times and CUPTI's timestamps share it.
  timespec ts;
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

void capture_exit_hook() { Capture::instance().at_exit(); }

std::uint64_t Capture::os_tid_cached() { return os_tid(); }

bool Capture::this_thread_holds_lock() { return CaptureLock::held(); }

Capture& Capture::instance() { return immortal<Capture>(); }

void Capture::attach(const chakrashim_capture_config& config) {
  CaptureLock lock(mutex_);
  config_ = config;
  marker_ = config.step_marker ? config.step_marker : "Optimizer.step#";
  device_.configure(&config_, &budget_);
  distributed_.set_on_answer([this](const std::string& json) {
    // On the watch thread, holding no lock of ours.
    if (dead() || exiting_.load() || host_.process_groups_written() || !host_.recording()) return;
    const auto info = nlohmann::json::parse(json, nullptr, false);
    if (info.is_discarded() || !info.is_object() || !info.contains("pg_config")) return;
    host_.write_process_groups(info["pg_config"].dump());
  });
  install_flush_signal();
  // A custom marker is counted by the step callback alone; the default one
  // by torch.optim's step hooks once they are in (optimizer_hooks.h).
  if (marker_ == "Optimizer.step#") {
    OptimizerHooks::Callbacks cb;
    cb.step_ended = [this] {
      const bool was_counting = rf_counting_.load();
      on_hook_step_end();
      sync_module_scopes(was_counting);
    };
    cb.registered = [this] {
      on_hooks_registered();
      // On this thread of ours, with the GIL, outside our lock: module
      // scopes' Python is made here, never on the job's threads.
      if (config_.module_scopes) modules_.prepare();
      EngineSteps::install();
      PythonExit::install();
    };
    cb.no_step_open = [this] { return open_markers_.load() == 0; };
    cb.give_up = [this] { return dead() || exiting_.load(); };
    cb.several_optimizers = [this](std::size_t n) {
      // Said once, at info (the rank that speaks for the job), as soon as
      // it is clear: before the window, when the fix still helps.
      const std::string k = std::to_string(n);
      log_info(k + " optimizers step in turn in this job (a GAN's generator and discriminator?): each of their "
               "steps counts as a step, so a window of N steps holds about N/" + k + " iterations; to count one "
               "step per iteration, set CHAKRA_STEP_MARKER to the name of a record that ends each iteration "
               "(README, Configuration)");
    };
    cb.group_by_group = [] {
      log_info("an optimizer steps once per parameter group here (a wrapper that is no torch optimizer, such as "
               "ZeRO's, steps it group by group): each of those steps counts as a step, so a window of N steps "
               "holds fewer iterations; to count one step per iteration, set CHAKRA_STEP_MARKER to the name of a "
               "record that ends each iteration (README, Configuration)");
    };
    // A forked child (dead) opens no records: it inherits the hooks, and
    // runs them as no-ops until it ends.
    ModuleScopes::set_keeping([] { return Capture::instance().window_records(); });
    hooks_.start(std::move(cb));
  } else if (config.module_scopes) {
    log_info("CHAKRA_MODULE_SCOPES is ignored with CHAKRA_STEP_MARKER set: module hooks go in and out "
             "at torch.optim's step hooks, which count steps only with the default marker");
  }
  scheduler_.configure(&config_);
  // On demand, a child forked at any time must never look for triggers nor
  // publish this rank's step (nor keep our trigger signal's handler): the
  // fork guard turns it off, as it does a child forked in a window.
  if (scheduler_.on_demand()) install_fork_guard();
  if (config.trigger_signal != 0 && !TriggerSignal::install(config.trigger_signal))
    log_warn("cannot install the handler of " + signal_name(config.trigger_signal) +
             " (CHAKRA_TRIGGER_SIGNAL): it triggers nothing");
  step_handle_ = register_step_callback();
  rf_counting_.store(true);
  // The exit hook that warns about a window never reached; the one that
  // finalizes an armed window is registered again after the ET's add, so
  // that it runs before torch destroys the observer (section 4.8).
  std::atexit(&capture_exit_hook);
  apply(scheduler_.window().attach(), now_ns(), os_tid());
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
  if (!name || std::strncmp(name, "Optimizer.", 10) != 0) return;
  // The job trains (an optimizer's zero_grad, say): the optimizer hooks'
  // thread may start now, with the job's own threads up (optimizer_hooks.h).
  if (optimizer_records_seen_.fetch_add(1, std::memory_order_relaxed) == 0) hooks_.try_again();
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
  if (!scheduler_.configured() || exiting_.load()) return;
  // A window that a signal or the memory cap ended while the job's
  // profiler ran: the steps after it are counted here.
  device_.release_if_profiler_stopped();
  if (scheduler_.done() || rf_counting_.load()) return;
  stepping_tid_.store(os_tid(), std::memory_order_relaxed);
  scheduler_.before_step_end(armed_);
  hook_counted_step_here();  // not counted again at its marker's end
  // Not armed (the step callback would count otherwise): no op-span
  // callback, so the boundary acts now, inside the Optimizer.step record.
  apply(scheduler_.window().step_ended(), now_ns(), os_tid());
}

void Capture::sync_module_scopes(bool was_counting) {
  // Off (the default): nothing at all per step. config_ is set once at
  // attach, before the hooks that call this can run.
  if (!config_.module_scopes) return;
  bool want = false;
  std::uint64_t next_step = 0, first_step = 0;
  {
    CaptureLock lock(mutex_);
    if (config_.module_scopes && !dead() && !exiting_.load() && armed_ && scheduler_.configured()) {
      first_step = scheduler_.window().schedule().start;
      if (was_counting) {
        // The boundary that ends this step acts after this hook: asked of
        // a copy of the window whether the next step is still in it.
        window::StepWindow next = scheduler_.window();
        (void)next.step_ended();
        want = next.armed();
        next_step = next.current();
      } else {
        want = true;  // on_hook_step_end just armed: the next step is the window's first
        next_step = scheduler_.window().current();
      }
    }
  }
  // Outside our lock: this runs Python.
  const bool was_in = modules_.installed();
  modules_.sync(want);
  if (want && !was_in && modules_.installed() && next_step > first_step) {
    // torch.optim's hooks, which put module scopes in, came in after the
    // window opened (their registrar thread got the GIL late, on a loaded
    // machine): the steps before have no module names. Said, not silent.
    const bool several = next_step - first_step > 1;
    log_info("module scopes begin at step " + std::to_string(next_step) + ": the window's step" +
             (several ? "s " + std::to_string(first_step) + "-" : " ") + std::to_string(next_step - 1) +
             (several ? " have" : " has") + " no module names (torch.optim's step hooks, which put them in, "
             "came in only after the window opened; open the window a few steps later)");
  }
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
  if (!scheduler_.configured() || exiting_.load()) return;
  device_.release_if_profiler_stopped();
  if (scheduler_.done()) return;
  stepping_tid_.store(os_tid(), std::memory_order_relaxed);
  scheduler_.before_step_end(armed_);
  const window::Boundary b = scheduler_.window().step_ended();
  if (op_span_handle_ != at::INVALID_CALLBACK_HANDLE && fn.handle() != 0) {
    pending_ = Pending{fn.handle(), b, os_tid()};
    pending_handle_.store(fn.handle(), std::memory_order_release);
    return;
  }
  apply(b, now_ns(), os_tid());
}

void Capture::on_op_end(const at::RecordFunction& fn, std::int64_t end_ns) {
  // The native recorder's end record comes after the span's, and
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
  // The step's length on the monotonic clock, read here (a wall-clock
  // step between two boundaries must not make it wrong, issue #48).
  const std::int64_t mono = monotonic_ns();
  const std::int64_t took = step_start_mono_ns_ != 0 ? mono - step_start_mono_ns_ : 0;
  if (b.ended && b.ended_phase == window::Phase::active && armed_ && cut_requested()) {
    // CHAKRA_MAX_MEMORY ran out in the step that ends here, after the
    // stepping thread's last op start (its look at the budget): another
    // thread's spans, or the decode thread's GPU records, filled it. The ET
    // stopped at that moment, so this step's own Optimizer.step node, which
    // is recorded at its end, is lost with the ops after it: the step is the
    // partial one, cut here, and every captured step has its whole ET. It
    // used to be counted captured (seen on a slow TSan run, issue #39;
    // tests/e2e/jobs/fill_in_optimizer_step.py makes that order).
    steps_.push_back(StepSpan{*b.ended, 0, static_cast<std::int64_t>(tid), step_start_ns_, now,
                              next_external_id(), took});
    step_start_ns_ = now;
    step_start_mono_ns_ = mono;
    cut_for_memory(*b.ended, *b.ended);
    return;
  }
  if (b.ended && b.ended_phase == window::Phase::active && armed_) {
    steps_.push_back(StepSpan{*b.ended, 0, static_cast<std::int64_t>(tid), step_start_ns_, now,
                              next_external_id(), took});
  }
  // A step that ran unrecorded: one store (the clocks were read anyway).
  if (b.ended && !armed_ && *b.ended > 0 && took > 0) unrecorded_steps_.add(took);
  step_start_ns_ = now;
  step_start_mono_ns_ = mono;
  if (armed_) device_.stand_back_if_profiler_started();
  if (b.end_active) {
    keeping_.store(false, std::memory_order_release);
    host_.stop_recording();
  }
  if (b.disarm) {
    if (armed_) disarm("end_step", std::nullopt);
    else scheduler_.plan_next();  // its arm failed (said): the next one may not
  }
  if (b.arm) arm();
  if (b.begin_active && armed_) {
    keeping_.store(device_on_, std::memory_order_release);
    // The ET records: the watch thread writes its process-group node now
    // from the answer it has (asked at the step before the window, or in an
    // earlier window), not at the next answer, which comes a second later,
    // after a short window (issue #34).
    if (host_.start_recording()) distributed_.replay();
  }
  // The watch thread asks torch.distributed (a group may appear at any
  // step); its answer lands in the callback set at attach.
  if (armed_) distributed_.request();
  // The window begins at the next boundary: get it ready now.
  if (!armed_ && !exiting_.load() && scheduler_.window_begins_after(b.current)) prepare_locked();
}

void Capture::end_span(SpanStore::ThreadBuffer& buffer, OpenSpan& open, const SpanRecord& span) {
  // Called only for an op that began while spans were kept. Its span is
  // kept even past CHAKRA_MAX_MEMORY (another store, the GPU side say, may
  // have reached it while the op ran): torch's ET exit callback may have
  // run before ours and written this op's node, and every ET
  // node must find its span (the rf_id join). Seen under TSan: one ET node
  // in 50 without its span when the decode thread filled the budget.
  if (!spans_.end(buffer, open, span)) spans_.add(buffer, span, /*past_cap=*/true);
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
  if (!armed_ || !host_.enabled()) return;
  host_.stop_recording();
}

void Capture::on_cut_requested() {
  if (os_tid() != stepping_tid_.load(std::memory_order_relaxed)) return;
  CaptureLock lock(mutex_);
  if (!armed_) return;
  if (abandon_if_no_training()) return;  // before the partial step is closed into steps_
  const std::uint64_t step = scheduler_.window().current();
  cut_for_memory(step, close_partial_step(/*force=*/true));
}

bool Capture::abandon_if_no_training() {
  if (!holds_no_training()) return false;
  scheduler_.set_done();
  abandon_window_at_exit();
  return true;
}

void Capture::cut_for_memory(std::uint64_t step, std::optional<std::uint64_t> partial_step) {
  std::int64_t none = 0;
  cut_at_ns_.compare_exchange_strong(none, now_ns());  // the GPU side hit it first
  log_warn("CHAKRA_MAX_MEMORY=" + std::to_string(config_.max_memory) + " bytes reached in step " +
           std::to_string(step) + ": the window is cut here; raise it, or capture fewer steps");
  disarm("memory_cap", partial_step);
}

void Capture::on_forked_child() {
  dead_.store(true, std::memory_order_relaxed);
  // Our copies of the window's claims: the lock is the parent's to release.
  for (auto& fd : claim_fds_)
    if (const int f = fd.exchange(-1); f >= 0) ::close(f);
  spans_.forget_in_forked_child();
  signals_.reset_in_forked_child();
  TriggerSignal::reset_in_forked_child();
  host_.on_forked_child();
  // Our callbacks stay registered and return at once (dead_): removing
  // them takes torch's callback-registry mutex, which another thread of the
  // parent may have held at fork, and the child then hung here forever
  // (issue #34). The cost is torch's RecordFunction work for them on the
  // child's ops.
}

}  // namespace chakrashim::bridge
