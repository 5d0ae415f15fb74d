// The capture at the job's end (capture.h): the window still open is
// written, and the exit waits for the writer, bounded, with Ctrl-C guarded
// meanwhile (issue #48). Runs from the C atexit handlers, after Python's
// finalization.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "bridge/bridge_log.h"
#include "bridge/capture.h"
#include "bridge/capture_lock.h"

namespace chakrashim::bridge {

void Capture::at_exit() {
  if (dead() || exiting_.exchange(true)) return;
  distributed_.stop_for_exit();  // Python is finalized: never ask it again
  // No job publishes its step here any more; the clean-up is the watch
  // thread's, waited for briefly (a hung filesystem must not hold the exit).
  scheduler_.stop_for_exit(std::min(std::chrono::milliseconds(2000),
                                    std::chrono::milliseconds(1000 * config_.exit_timeout_s)));
  CaptureLock lock(mutex_);
  if (!scheduler_.configured()) return;
  prepared_.reset();  // the job ended in the step before a window
  if (!ever_armed_) {
    // On demand, no window until asked is the normal case.
    if (!scheduler_.on_demand()) warn_if_never_armed();
    return;
  }
  if (armed_ && steps_.empty()) {
    // The window kept no whole step: the job ended in its first step (START
    // at or past the job's last optimizer step: its eval, checkpointing and
    // teardown ran there; or START=0 in a process that never completed a
    // step, a launcher or a worker). That is no capture: nothing is written,
    // what arm made goes (docs/design.md section 3), and the window is said
    // not reached (issue #49: it wrote a pair of 0 steps that check counted,
    // convert converted and report scaled its chart to).
    abandon_window_at_exit();
  } else if (armed_) {
    disarm("exit", close_partial_step());
  }
  wait_for_writer_at_exit();
  // A signal recorded just before exit is delivered now, not by a watcher
  // the exit would outrun.
  signals_.close_now();
}

void Capture::abandon_window_at_exit() {
  armed_ = false;
  host_.remove();
  at::removeCallback(op_span_handle_);
  op_span_handle_ = at::INVALID_CALLBACK_HANDLE;
  device_.stop(std::chrono::milliseconds(config_.exit_timeout_s * 1000));
  if (layout_) discard_outputs(*layout_, host_.on(), device_on_);  // none made yet: nothing to remove
  layout_deferred_ = false;
  // A repeated or triggered window's own folder (step-S/), if now empty.
  if (scheduler_.many_windows()) ::rmdir(scheduler_.window_trace_dir().c_str());
  signals_.stop();
  const std::uint64_t markers = markers_seen_.load();
  if (markers == 0) return;  // a launcher or a worker: silent
  const std::uint64_t start = scheduler_.window().schedule().start;
  const std::string taken = markers == 1 ? "step 0" : "steps 0-" + std::to_string(markers - 1);
  const std::string line = "the window from step " + std::to_string(start) + " was not reached: the job completed " +
                           std::to_string(markers) + " optimizer steps (" + taken + ") and ended during step " +
                           std::to_string(start) + ", before its optimizer step; nothing was written for it";
  // One of several windows (repeated, on demand): the last one not reached
  // is the usual end of a job.
  if (scheduler_.many_windows()) {
    log_info(line);
  } else {
    log_warn(line + ". Steps count optimizer steps taken, from 0: an iteration whose optimizer.step() did not "
                    "run is no step, as when a GradScaler skips it on inf or nan gradients; capture steps the job "
                    "completes (CHAKRA_START_STEP at most " + std::to_string(markers - 1) + ")");
  }
}

namespace {

std::string joined(const std::vector<std::string>& items, const std::string& sep) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : sep) + i;
  return out;
}

std::string megabytes(std::uint64_t bytes) {
  const std::uint64_t mb = (bytes + (1u << 19)) >> 20;
  return mb == 0 ? "under 1 MB" : std::to_string(mb) + " MB";
}

}  // namespace

void Capture::wait_for_writer_at_exit() {
  writer_.raise_priority();  // nothing of the job's competes any more
  const auto pending = writer_.pending();
  if (pending.empty()) return;
  // Python's finalization has put Ctrl-C back to killing the process at
  // once: while the files are written, a first SIGINT or SIGTERM waits for
  // them, a second abandons them (ExitSignalGuard, issue #48). The lines are
  // made now: the handler can only write them.
  std::vector<std::string> partials, what;
  for (const auto& p : pending) {
    partials.insert(partials.end(), p.partials.begin(), p.partials.end());
    what.push_back("steps " + p.steps + " (" + std::to_string(p.ops) + " ops, " + megabytes(p.memory_bytes) +
                   " in memory)");
  }
  const std::string prefix = "[chakrashim rank " + std::to_string(config_.rank) + "] ";
  const std::string timeout = "CHAKRA_EXIT_TIMEOUT=" + std::to_string(config_.exit_timeout_s) + " s";
  ExitSignalGuard::install(prefix + "a signal arrived while the job waits for its traces to be written: it ends "
                                    "of it once they are (at most " + timeout + "); a second one abandons them\n",
                           prefix + "a second signal: the traces are abandoned; what was not written yet stays "
                                    "unfinished, of " + joined(partials, ", ") + " (chakrashim check reports them)\n");
  // Said after a second: a silent wait at exit invites the Ctrl-C that
  // used to lose the capture. A notice, not a warning: nothing is wrong,
  // and a loaded machine that makes the write take a second must not turn
  // a clean run's log into one with a problem in it.
  const auto total = std::chrono::milliseconds(1000 * config_.exit_timeout_s);
  const auto first = std::min(total, std::chrono::milliseconds(1000));
  bool done = writer_.wait(first);
  if (!done && total > first) {
    log_info("the job waits while chakrashim writes its traces of " + joined(what, " and ") + " to " +
             joined(partials, ", ") + " (at most " + timeout + "); a Ctrl-C now lets them finish first, a "
             "second one abandons them");
    done = writer_.wait(total - first);
  }
  if (!done && !writer_late_said_.exchange(true))
    log_error("the trace writer did not finish within " + timeout + "; its files stay .partial");
  ExitSignalGuard::release_and_deliver();
}

void Capture::wait_for_writer() {
  // The job ends (exit, or a terminating signal that waits for the files):
  // nothing of the job's competes with the writer any more, and a writer
  // left at the lowest priority could miss the timeout on a busy node.
  if (exiting_.load() || SignalRelay::terminating_recorded()) writer_.raise_priority();
  if (!writer_.wait(config_.exit_timeout_s) && !writer_late_said_.exchange(true)) {
    log_error("the trace writer did not finish within CHAKRA_EXIT_TIMEOUT=" +
              std::to_string(config_.exit_timeout_s) + " s; its files stay .partial");
  }
}

}  // namespace chakrashim::bridge
