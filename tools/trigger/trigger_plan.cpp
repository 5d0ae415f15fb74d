#include "trigger/trigger_plan.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace chakrashim::tools::trigger {

namespace {

// A note may be written by hand or by a future job: a rate so large that
// its leads overflow is treated as this many steps per second at most.
constexpr double kMaxRate = 1e9;

std::uint64_t steps_in(double seconds, double steps_per_s) {
  const double r = usable_rate(steps_per_s);
  return static_cast<std::uint64_t>(std::ceil(seconds * std::min(r, kMaxRate)));
}

std::string range(std::uint64_t first, std::uint64_t last) {
  return first == last ? std::to_string(first) : std::to_string(first) + "-" + std::to_string(last);
}

}  // namespace

double usable_rate(double steps_per_s) { return std::isfinite(steps_per_s) && steps_per_s > 0 ? steps_per_s : 0; }

std::uint64_t auto_lead(double steps_per_s) { return std::max<std::uint64_t>(2, steps_in(3, steps_per_s)); }

std::uint64_t safe_lead(double steps_per_s) { return steps_in(2, steps_per_s); }

Plan plan_trigger(const window::StepNote& note, const PlanRequest& request) {
  Plan plan;
  plan.automatic = !request.in && !request.at;
  if (request.at) {
    if (*request.at <= note.step) {
      plan.error = "job " + note.job_id + " is already at step " + std::to_string(note.step) + ", past --at " +
                   std::to_string(*request.at) + "; give a later step, or --in K for K steps from now";
      return plan;
    }
    plan.lead = *request.at - note.step;
  } else {
    plan.lead = request.in ? *request.in : auto_lead(note.steps_per_s);
  }
  // The last step the job would run for this window (warm-up included) must
  // be a step number at all; decode_trigger refuses anything closer to the top.
  const std::uint64_t span = note.warmup + request.steps;
  if (span < note.warmup || span == UINT64_MAX || plan.lead > UINT64_MAX - note.step ||
      note.step + plan.lead > UINT64_MAX - span - 1) {
    plan.error = "the window would end past the largest step number";
    return plan;
  }
  plan.first_step = note.step + plan.lead;
  const std::uint64_t safe = safe_lead(note.steps_per_s);
  if (!plan.automatic && plan.lead < safe) {
    const std::uint64_t better = auto_lead(note.steps_per_s);
    const std::string what = request.at ? "--at " + std::to_string(*request.at) + " is only " +
                                              std::to_string(plan.lead) + (plan.lead == 1 ? " step" : " steps") +
                                              " ahead,"
                                        : "--in " + std::to_string(plan.lead) + " is";
    const std::string suggestion = request.at ? "--at " + std::to_string(note.step + better) + " or later"
                                              : "--in " + std::to_string(better);
    plan.warning = what + " under 2 s of steps at " + rate_text(note.steps_per_s) +
                   ": ranks look for triggers once a second and the published step can be a second old, so some "
                   "ranks may be past step " + std::to_string(plan.first_step) +
                   " when they look and capture nothing; " + suggestion + " leaves about 3 s";
  }
  return plan;
}

std::string kept_steps_text(std::uint64_t first_step, std::uint64_t warmup, std::uint64_t steps) {
  const std::uint64_t kept = first_step + warmup;
  std::string out = (steps == 1 ? "step " : "steps ") + range(kept, kept + steps - 1) + " (" + std::to_string(steps) +
                    (steps == 1 ? " step" : " steps");
  if (warmup > 0) out += ", after warm-up " + std::string(warmup == 1 ? "step " : "steps ") + range(first_step, kept - 1);
  return out + ")";
}

std::optional<double> seconds_until(const window::StepNote& note, std::uint64_t first_step, double now_s) {
  const double r = usable_rate(note.steps_per_s);
  if (r == 0) return std::nullopt;
  const double age = std::max(0.0, now_s - note.time_s);
  return static_cast<double>(first_step - std::min(first_step, note.step)) / r - age;
}

std::string rate_text(double steps_per_s) {
  const double r = usable_rate(steps_per_s);
  if (r == 0) return "rate not known yet";
  char buf[48];
  std::snprintf(buf, sizeof buf, r >= 1 ? "%.1f steps/s" : "%.2g steps/s", r);
  return buf;
}

}  // namespace chakrashim::tools::trigger
