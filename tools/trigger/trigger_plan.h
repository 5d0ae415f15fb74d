// Which window a trigger asks for, from the job's published step and the
// command's --steps/--in/--at: pure arithmetic and the words that describe
// it, so that the command only parses and prints.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "files/on_demand_files.h"

namespace chakrashim::tools::trigger {

inline constexpr std::uint64_t kDefaultSteps = 5;

// The published rate if it is a usable one (finite, > 0), else 0: unknown.
double usable_rate(double steps_per_s);

// The lead chosen without --in/--at: about 3 s ahead at the published rate,
// and at least 2 steps. Ranks look for triggers once a second and the
// published step can itself be a second old, so 3 s leaves a second to spare.
//   0 (unknown) -> 2   0.5 -> 2   2.5 -> 8   100 -> 300
std::uint64_t auto_lead(double steps_per_s);
// The smallest lead that is not warned about: 2 s of steps (0 when the rate
// is unknown: nothing to warn from).   2.5 -> 5   0 -> 0
std::uint64_t safe_lead(double steps_per_s);

struct PlanRequest {
  std::uint64_t steps = kDefaultSteps;  // --steps, 1..kMaxTriggerSteps
  std::optional<std::uint64_t> in;      // --in K, K >= 1
  std::optional<std::uint64_t> at;      // --at STEP
};

struct Plan {
  std::uint64_t first_step = 0;  // S: the window's folder is step-S
  std::uint64_t lead = 0;        // S minus the published step
  bool automatic = false;        // no --in or --at
  std::string warning;           // the lead is short (empty: none)
  std::string error;             // no trigger can be written (exit 1)
};

Plan plan_trigger(const window::StepNote& note, const PlanRequest& request);

// The steps a window from `first_step` keeps after the job's warm-up:
//   (1048, 0, 5) -> "steps 1048-1052 (5 steps)"
//   (1048, 2, 5) -> "steps 1050-1054 (5 steps, after warm-up steps 1048-1049)"
//   (7, 0, 1)    -> "step 7 (1 step)"
std::string kept_steps_text(std::uint64_t first_step, std::uint64_t warmup, std::uint64_t steps);

// Seconds until the job reaches `first_step`, from the note's step, rate and
// age (negative: it may have reached it already); nullopt when the rate is
// unknown.
std::optional<double> seconds_until(const window::StepNote& note, std::uint64_t first_step, double now_s);

// 2.5 -> "2.5 steps/s"   0.25 -> "0.25 steps/s"   0 -> "rate not known yet"
std::string rate_text(double steps_per_s);

}  // namespace chakrashim::tools::trigger
