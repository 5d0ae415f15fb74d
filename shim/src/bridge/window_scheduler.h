// Which windows a process captures, and when: one fixed window, repeated
// windows (CHAKRA_REPEAT_EVERY), or windows asked for while the job runs
// (CHAKRA_ON_DEMAND: trigger files and the trigger signal, through the
// trigger watch). The plan itself is pure (window/window_plan.h); this
// class feeds it the steps and the requests, and keeps the one window
// (window/step_window.h) that runs at a time.
//
// Threads: every call but stop_for_exit is made with the capture's lock
// held, on the stepping thread; the trigger watch has its own thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "bridge/trigger_watch.h"
#include "chakrashim/bridge_abi.h"
#include "window/step_window.h"
#include "window/window_plan.h"

namespace chakrashim::bridge {

class WindowScheduler {
 public:
  // At attach: the plan from the configuration (owned by the capture, alive
  // for the process), and its first window, if any.
  void configure(const chakrashim_capture_config* config);
  bool configured() const { return window_.has_value(); }
  window::StepWindow& window() { return *window_; }
  const window::StepWindow& window() const { return *window_; }
  bool on_demand() const { return plan_ && plan_->mode() == window::PlanMode::on_demand; }
  // Each window writes into a folder of its own (repeated or on demand).
  bool many_windows() const { return plan_->many_windows(); }
  // window() holds a window to capture (open or waited for), not never().
  bool planned() const { return planned_; }
  // The window ended for good: later steps change nothing.
  bool done() const { return done_; }
  void set_done() { done_ = true; }
  // The boundary after step `current` begins the planned window.
  bool window_begins_after(std::uint64_t current) const;

  // At each step end, before the window sees it (on demand): starts the
  // trigger watch at the first one, publishes the step, and takes the
  // requests that came. `armed`: a window is open now (said in a refusal).
  void before_step_end(bool armed);
  // Once a window ended (or none was planned): the next one.
  void plan_next();
  // The trace folder of the planned window: CHAKRA_TRACE_DIR, or its
  // step-S folder when there are many windows.
  std::string window_trace_dir() const;
  // The process exits: no step is published any more; the watch's clean-up
  // is waited for at most `limit`. Takes no lock of the capture's.
  void stop_for_exit(std::chrono::milliseconds limit) { triggers_.stop_for_exit(limit); }

 private:
  void start_trigger_watch();
  void take_requests(bool armed);
  void request_window(std::uint64_t first_step, std::uint64_t steps, const std::string& origin,
                      bool armed);

  const chakrashim_capture_config* config_ = nullptr;
  std::optional<window::WindowPlan> plan_;
  std::optional<window::StepWindow> window_;
  bool planned_ = false;
  bool done_ = false;
  TriggerWatch triggers_;
};

}  // namespace chakrashim::bridge
