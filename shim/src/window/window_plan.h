// Which windows a process captures (docs/on-demand.md), as a pure plan: one
// fixed window (CHAKRA_START_STEP..CHAKRA_END_STEP), the same window
// repeated every K steps (CHAKRA_REPEAT_EVERY), or windows requested while
// the job runs (CHAKRA_ON_DEMAND: `chakrashim trigger`, a signal). The
// StepWindow runs one window at a time; when it ends, the plan names the
// next.
//
// Between two windows lies at least one step: a window's files are handed
// to the writer at its last boundary, and the next window arms at a later
// one.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "window/step_window.h"

namespace chakrashim::window {

enum class PlanMode { fixed, repeating, on_demand };

struct PlanConfig {
  PlanMode mode = PlanMode::fixed;
  Schedule first;  // fixed and repeating: the first window
  // repeating: steps from one window's first step to the next one's, more
  // than a window's length.
  std::uint64_t every = 0;
  // repeating: no window goes past this step; none: the end of the job.
  std::optional<std::uint64_t> until;
  // on_demand: warmup steps before the steps a request keeps.
  std::uint64_t warmup = 0;
};

enum class Verdict {
  queued,    // it will be captured
  past,      // this process is already at or past its first step
  overlaps,  // it overlaps (or touches) a window open or planned
};

struct RequestOutcome {
  Verdict verdict = Verdict::queued;
  Schedule window;                  // what the request asked for
  std::optional<Schedule> conflict;  // overlaps: the window in the way
};

class WindowPlan {
 public:
  explicit WindowPlan(PlanConfig config) : config_(config) {}

  // Each window gets its own step-S folder (every mode but fixed).
  bool many_windows() const { return config_.mode != PlanMode::fixed; }
  PlanMode mode() const { return config_.mode; }

  // The window to wait for from step 0, if any.
  std::optional<Schedule> first() const;
  // The next window that begins after `current` (the step in progress),
  // once the window before it ended. Requested windows that begin at or
  // before `current` are dropped and added to `missed`.
  std::optional<Schedule> next(std::uint64_t current, std::vector<Schedule>* missed = nullptr);
  // on_demand: capture `steps` steps from `first_step`. `current` is the
  // step in progress; `planned` the window open or waited for (none: idle).
  // A queued request that could begin before `planned` does not jump it:
  // it waits in the queue, and is missed if `planned` runs past its start.
  RequestOutcome request(std::uint64_t first_step, std::uint64_t steps, std::uint64_t current,
                         const std::optional<Schedule>& planned);
  const std::deque<Schedule>& queued() const { return queue_; }

  // Used by the StepWindow while no window is planned: never reached.
  static Schedule never();
  static bool is_never(const Schedule& s) { return s.start == never().start; }

 private:
  PlanConfig config_;
  std::deque<Schedule> queue_;  // on_demand: requests, by first step
};

// "3-7", or "5" for a window of one step: the steps a window spans.
std::string steps_text(const Schedule& s);

}  // namespace chakrashim::window
