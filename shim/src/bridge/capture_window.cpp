// A window's life in the capture (capture.h): prepared at the step before
// it, armed at its first boundary, disarmed by whatever ends it (its end
// step, a signal, the memory cap, the exit), and handed to the writer
// thread. Every function here runs with the capture's lock held.
#include <unistd.h>

#include "bridge/bridge_log.h"
#include "bridge/callbacks.h"
#include "bridge/capture.h"
#include "bridge/engine_steps.h"
#include "bridge/python_exit.h"
#include "bridge/capture_lock.h"
#include "bridge/fork_guard.h"
#include "writers/window_trailer.h"

namespace chakrashim::bridge {
namespace {
// How long the watcher waits for the stepping thread to reach an op before
// finalizing itself: short against Slurm's 30 s between SIGTERM and SIGKILL.
constexpr std::chrono::milliseconds kSignalGrace{2000};
}  // namespace

std::optional<files::Layout> Capture::window_folders(bool host, bool device, std::string& error,
                                                     bool choose_only) {
  chakrashim_capture_config window_config = config_;
  const std::string dir = scheduler_.window_trace_dir();
  window_config.trace_dir = dir.c_str();
  return choose_only ? choose_folders(window_config, error)
                     : prepare_folders(window_config, host, device, error);
}

void Capture::prepare_locked() {
  const std::uint64_t start = scheduler_.window().schedule().start;
  if (prepared_ && prepared_->start == start) return;
  prepared_.reset();
  // Asked first: the watch thread asks Python while this thread goes on.
  distributed_.new_window();
  distributed_.request();
  Prepared p;
  p.start = start;
  // As arm decides, quietly: arm says why the ET is skipped, and prepares
  // again if its decision differs.
  p.host = HostTrace::wanted(config_);
  p.device = config_.device_trace != 0;
  std::string error;
  p.folders = window_folders(p.host, p.device, error, /*choose_only=*/true);
  // A job that first loads CUDA in this very step has its window captured
  // without the GPU side.
  if (p.device) p.cuda = device_.cuda_present();
  prepared_ = std::move(p);
}

bool Capture::claim_folders(std::optional<Prepared>& prepared, bool host_on, bool* from_prepared) {
  std::string error;
  const bool overwrite = config_.overwrite != 0;
  if (prepared && make_folders(*prepared->folders, host_on, device_on_, error) &&
      claim_outputs(*prepared->folders, host_on, device_on_, overwrite, error))
    layout_ = prepared->folders;
  // Said at debug level for tests/e2e/test_window_end.py: the costly part
  // of arming ran in the step before (issue #34 item 4).
  if (from_prepared) *from_prepared = layout_.has_value();
  if (!layout_) {
    // Not prepared, or the prepared name cannot be claimed (taken since, or
    // its folder cannot be made): chosen and made again.
    layout_ = window_folders(host_on, device_on_, error);
    if (layout_ && !claim_outputs(*layout_, host_on, device_on_, overwrite, error)) layout_.reset();
  }
  if (layout_) {
    // A forked child closes its copies of the claims (on_forked_child): a
    // child that outlives us must not keep their locks alive.
    claim_fds_[0].store(layout_->host_claim ? layout_->host_claim->get() : -1);
    claim_fds_[1].store(layout_->device_claim ? layout_->device_claim->get() : -1);
  }
  if (!layout_) {
    log_error("cannot write traces under CHAKRA_TRACE_DIR=" + std::string(config_.trace_dir) + " (" +
              error + "); " +
              (scheduler_.many_windows() ? "this window is not captured" : "capture is off") +
              ", the job runs on");
    return false;
  }
  if (layout_->replaced_files > 0) {
    // CHAKRA_OVERWRITE over another run's capture: its files of every rank
    // go, not only this rank's (issue #49: a 1-rank run over a 2-rank
    // capture left the old rank 1 beside the new rank 0).
    log_info("CHAKRA_OVERWRITE: removed " + std::to_string(layout_->replaced_files) +
             " file(s) of another run's capture in " + base_name(layout_->host_dir) + "/" + " and " +
             base_name(layout_->device_dir) + "/");
  }
  if (!layout_->passed_over.empty()) {
    // Someone put a link, or a folder of their own, where ours belong (a
    // shared trace folder): never written through; the next free name.
    log_warn("not writing into folders that are not this job's: " + layout_->passed_over + "; the traces go to " +
             layout_->host_dir.substr(layout_->host_dir.rfind('/') + 1) + " and " +
             layout_->device_dir.substr(layout_->device_dir.rfind('/') + 1) + " instead");
  }
  return true;
}

void Capture::arm() {
  // Attempted, whatever follows: a failed arm has said why, and the exit
  // must not add that the window was never reached.
  ever_armed_ = true;
  const bool host_on = host_.choose(config_);
  device_on_ = config_.device_trace != 0;
  budget_.reset(config_.max_memory);
  // What the step before made ready, if it was for this window and as arm
  // decided (else forgotten: nothing was made on disk, and done here).
  std::optional<Prepared> prepared = std::move(prepared_);
  prepared_.reset();
  if (prepared &&
      (prepared->start != scheduler_.window().schedule().start || prepared->host != host_on ||
       prepared->device != device_on_ || !prepared->folders))
    prepared.reset();
  if (!prepared) distributed_.new_window();  // else its first question was asked then
  spans_.set_budget(&budget_);
  cut_at_ns_.store(0);
  layout_.reset();
  // A window armed before the process completed any step (CHAKRA_START_STEP
  // =0 arms as torch loads): its folders are made and claimed when it ends,
  // with a step to write, not now. Every process that imports torch arms
  // such a window, and most never step (a launcher, a DataLoader worker):
  // one that ends without running its exit handlers, as torch's DataLoader
  // worker does on its parent's SIGTERM (_exit, soak seed 33019), left an
  // empty .partial of each behind. Torch's own observer writes as it goes
  // and needs its file now.
  layout_deferred_ = scheduler_.window().current() == 0 && markers_seen_.load() == 0 && !prepared &&
                     (!host_on || host_.native());
  bool from_prepared = false;
  if (!layout_deferred_ && !claim_folders(prepared, host_on, &from_prepared)) return;
  std::string error;
  if (host_on && !host_.add(layout_ ? host_partial_through(*layout_) : std::string(), &budget_, error)) {
    log_error(error + "; the ET is off, the device trace goes on");
    if (layout_) discard_outputs(*layout_, true, false);
  }
  if (device_on_) device_.start(prepared ? prepared->cuda : std::nullopt);
  install_fork_guard();
  // After add: our exit hook must run before torch destroys its observer.
  std::atexit(&capture_exit_hook);
  stepping_tid_.store(os_tid(), std::memory_order_relaxed);
  stepping_rf_tid_ = at::RecordFunction::currentThreadId();
  if (step_handle_ == at::INVALID_CALLBACK_HANDLE) {
    // Registered inside the Optimizer.step record that armed: that record's
    // end is not in its snapshot, so the step is not counted twice.
    step_handle_ = register_step_callback();
    rf_counting_.store(true);
  }
  // With the native ET recorder, one callback takes both the span and the
  // ET records, and runs the deferred boundary after the ET's end record.
  op_span_handle_ = host_.native() ? register_op_callback_with_et() : register_op_span_callback();
  if (!signals_.start(kSignalGrace, [this](int sig) { finalize_for_signal(sig); },
                      [this] { wait_for_writer(); })) {
    log_warn("cannot watch for SIGTERM/SIGINT in the window: a signal would lose the traces");
  }
  armed_ = true;
  // Python's finalization must leave SIGINT/SIGTERM with the relay while
  // the window is open or written (python_exit.h).
  PythonExit::schedule();
  // Once a process (a flag beside the window's own: a periodic capture
  // arms many times, and says it at the first).
  static std::atomic<bool> said_engine_steps{false};
  if (EngineSteps::installed() && !said_engine_steps.exchange(true))
    log_info("counting DeepSpeed engine steps: a step is one engine.step() at a gradient-accumulation boundary "
             "(engine.global_steps), from its start to its return, ZeRO's gathers included");
  log_debug("armed at step " + std::to_string(scheduler_.window().current()) +
            (from_prepared ? " (folders and probes prepared at the step before)"
                           : " (nothing prepared at the step before: all done now)"));
}

void Capture::recount_engine_steps(std::uint64_t global_steps) {
  std::uint64_t counted = 0;
  auto recount = window::StepWindow::Recount::not_needed;
  {
    CaptureLock lock(mutex_);
    if (dead() || exiting_.load() || !scheduler_.configured() || scheduler_.on_demand()) return;
    counted = scheduler_.window().current();
    recount = scheduler_.window().recount(global_steps);
  }
  if (recount == window::StepWindow::Recount::not_needed) return;
  if (recount == window::StepWindow::Recount::refused) {
    // Too late to move the count (the window is armed, has captured, or is
    // less than three steps away): the steps stay ours, and are flagged.
    log_warn("counted " + std::to_string(counted) + " steps before DeepSpeed's engine step was seen (its inner "
             "optimizer's, one per parameter group), but the engine has taken " + std::to_string(global_steps) +
             ": too near the window to count again, so the captured steps are numbered from chakrashim's count, "
             "not engine.global_steps; set CHAKRA_START_STEP later, or CHAKRA_STEP_MARKER");
    return;
  }
  log_info("counted " + std::to_string(counted) + " steps before DeepSpeed's engine step was seen (its inner "
           "optimizer's, one per parameter group); the engine has taken " + std::to_string(global_steps) +
           ": counting from there");
}

void Capture::disarm(const std::string& reason, std::optional<std::uint64_t> partial_step) {
  if (!armed_) return;
  armed_ = false;
  scheduler_.set_done();
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
  host_.finish(spans_.threads() > 1);
  at::removeCallback(op_span_handle_);
  op_span_handle_ = at::INVALID_CALLBACK_HANDLE;
  if (hooks_.active() && step_handle_ != at::INVALID_CALLBACK_HANDLE) {
    // At the end of the marker record that ended the window: the step
    // callback already saw it. The hooks count from here.
    at::removeCallback(step_handle_);
    step_handle_ = at::INVALID_CALLBACK_HANDLE;
    rf_counting_.store(false);
    // Said as on_hooks_registered says it: hooks registered while the
    // window was armed take over here (under load the registrar thread may
    // only get its turn after the window opened).
    log_debug("steps are counted by torch.optim's step hooks from the window's end: no callback of ours runs per op");
  }
  pending_.reset();
  pending_handle_.store(0, std::memory_order_release);
  DeviceCapture device = device_.stop(std::chrono::milliseconds(config_.exit_timeout_s * 1000));
  if (layout_deferred_) {
    // Claimed now, with steps to write (arm). Refused (said by
    // claim_folders), the window's records go.
    layout_deferred_ = false;
    std::optional<Prepared> none;
    if (!claim_folders(none, host_.on())) {
      (void)host_.take_records();
      (void)spans_.take_all(now_ns());
      steps_.clear();
      (void)unrecorded_steps_.take();
      if (!exiting_.load()) scheduler_.plan_next();
      return;
    }
  }
  writer_.start(window_output(reason, partial_step, std::move(device)));
  if (!exiting_.load()) scheduler_.plan_next();
}

WindowOutput Capture::window_output(std::string reason, std::optional<std::uint64_t> partial_step,
                                    DeviceCapture device) {
  // The budget can be filled after the last boundary (one filled before it
  // cut the window there, apply): by the records that CUPTI delivers only
  // at stop's flush (it completes a buffer when it is full; the last ones,
  // or every one of a short window, come in that flush). Those records are
  // cut where the budget ran out (truncated_at, dropped_records) as they
  // would have been in mid-window: the window is cut by the memory cap
  // however fast the records were drained, and says so, once. A window that
  // ended early anyway (a signal, the exit) keeps that reason; the line is
  // said still.
  writers::WindowEnd end;
  end.reason = std::move(reason);
  end.cut_by_memory = end.reason != "memory_cap" && budget_.exhausted();
  if (end.cut_by_memory) {
    log_warn("CHAKRA_MAX_MEMORY=" + std::to_string(config_.max_memory) +
             " bytes reached by the window's records as it ended: the trace is cut where the cap was "
             "reached; raise it, or capture fewer steps");
  }
  WindowOutput out;
  out.layout = *layout_;
  // The claims' locks go with the output: released once it is written.
  layout_->host_claim.reset();
  layout_->device_claim.reset();
  claim_fds_[0].store(-1);
  claim_fds_[1].store(-1);
  out.host = host_.on();
  out.et_native = host_.native();
  if (out.et_native) out.et_records = host_.take_records();
  out.device = device_on_;
  out.overwrite = config_.overwrite != 0;
  out.gzip = config_.gzip != 0;
  out.memory_bytes = budget_.used();
  // Ops still open end at the window's edge, the end of its last step (an
  // op around the whole iteration, issue #49).
  out.spans = spans_.take_all(steps_.empty() ? now_ns() : steps_.back().end_ns);
  out.device_capture = std::move(device);
  out.steps = std::move(steps_);
  steps_.clear();
  out.unrecorded_step_ns = unrecorded_steps_.take();
  out.exe_name = config_.exe_name ? config_.exe_name : "";
  out.pid = static_cast<std::int64_t>(::getpid());
  out.stepping_rf_tid = stepping_rf_tid_;
  for (auto& s : out.steps) s.pid = out.pid;
  out.header.distributed.rank = config_.rank;
  if (config_.world_size >= 0)
    out.header.distributed.world_size = static_cast<std::uint64_t>(config_.world_size);

  const window::Schedule& schedule = scheduler_.window().schedule();
  end.start = schedule.start;
  end.end = schedule.end;
  end.warmup = schedule.warmup;
  end.active = schedule.active;
  for (const auto& s : out.steps) end.kept.push_back(s.step);
  end.partial_step = partial_step;
  end.window_cut_short = scheduler_.window().cut().cut_short;
  if (const std::int64_t cut = cut_at_ns_.load()) end.truncated_at_ns = cut;
  end.host_on = host_.on();
  end.host_asked = config_.host_trace != 0;
  end.host_state = host_.state();
  end.device_on = device_on_;
  end.cupti_state = device_.cupti_state();
  end.device_sync = out.device_capture.device_sync;
  if (config_.ranks_filter) end.ranks_filter = config_.ranks_filter;
  end.world_size = out.header.distributed.world_size;
  end.run_id = config_.run_id ? config_.run_id : "";
  end.trace_name = layout_->device_path;
  end.version = CHAKRASHIM_VERSION;
  end.torch_version = built_torch_version();
  out.trailer = writers::window_trailer(end);

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
  return out;
}

void Capture::finalize_for_signal(int sig) {
  {
    CaptureLock lock(mutex_);
    if (!armed_) return;
    if (abandon_if_no_training()) return;
    disarm("signal:" + signal_name(sig), close_partial_step());
  }
  // A terminating signal ends the process next: the files must be done
  // first, and the job must not run on meanwhile.
  if (SignalRelay::terminating_recorded()) wait_for_writer();
}

std::optional<std::uint64_t> Capture::close_partial_step(bool force) {
  const window::Cut cut = scheduler_.window().cut();
  if (cut.phase != window::Phase::active || (!keeping_.load() && !force)) return std::nullopt;
  steps_.push_back(StepSpan{cut.current, 0,
                            static_cast<std::int64_t>(stepping_tid_.load() ? stepping_tid_.load()
                                                                           : os_tid()),
                            step_start_ns_, now_ns(), next_external_id(),
                            step_start_mono_ns_ != 0 ? monotonic_ns() - step_start_mono_ns_ : 0});
  return cut.current;
}

void Capture::warn_if_never_armed() {
  const std::uint64_t markers = markers_seen_.load();
  if (markers > 0) {
    // Steps are optimizer steps taken: iterations whose step a GradScaler
    // skipped (inf or nan gradients) never count, which the job cannot see
    // from here at no cost; said, so that "3 steps" in a 10-iteration job
    // is understood (issue #38).
    const std::string taken = markers == 1 ? "step 0" : "steps 0-" + std::to_string(markers - 1);
    log_warn("the window was never reached: the job completed " + std::to_string(markers) +
             " optimizer steps (" + taken + "), and capture starts at CHAKRA_START_STEP=" +
             std::to_string(config_.start_step) +
             " (steps count from 0). Steps are optimizer steps taken: an iteration whose optimizer.step() "
             "did not run is no step, as when a GradScaler skips it on inf or nan gradients");
  } else if (optimizer_records_seen_.load() > 0) {
    log_warn("no step marker '" + marker_ +
             "' was seen, though the job ran optimizer records: a torch.compile'd optimizer "
             "step has none (Dynamo drops its record, and chakrashim's step hooks do nothing inside "
             "compiled code); wrap each call of the compiled step, outside it, in "
             "torch.profiler.record_function(\"train_step\") and set CHAKRA_STEP_MARKER=train_step");
  } else if (saw_backward_.load()) {
    log_warn("the job ran autograd backward passes but no optimizer step ('" + marker_ +
             "'): chakrashim counts steps by torch.optim steps, so nothing was captured; for a "
             "job that updates its weights another way, wrap each step in "
             "torch.profiler.record_function(\"train_step\") and set CHAKRA_STEP_MARKER=train_step");
  }
}

}  // namespace chakrashim::bridge
