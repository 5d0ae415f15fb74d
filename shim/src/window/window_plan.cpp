#include "window/window_plan.h"

#include <algorithm>
#include <limits>
#include <string>

namespace chakrashim::window {

namespace {
// Overlapping or adjacent: two windows need one step between them.
bool too_close(const Schedule& a, const Schedule& b) {
  const auto max = std::numeric_limits<std::uint64_t>::max();
  const bool a_before_b = a.end < max && a.end + 1 < b.start;
  const bool b_before_a = b.end < max && b.end + 1 < a.start;
  return !a_before_b && !b_before_a;
}
}  // namespace

Schedule WindowPlan::never() {
  const auto max = std::numeric_limits<std::uint64_t>::max();
  return Schedule{max, max, 0, 1};
}

std::string steps_text(const Schedule& s) {
  if (s.start == s.end) return std::to_string(s.start);
  return std::to_string(s.start) + "-" + std::to_string(s.end);
}

std::optional<Schedule> WindowPlan::first() const {
  if (config_.mode == PlanMode::on_demand) return std::nullopt;
  if (config_.mode == PlanMode::repeating && config_.until && config_.first.end > *config_.until)
    return std::nullopt;
  return config_.first;
}

std::optional<Schedule> WindowPlan::next(std::uint64_t current, std::vector<Schedule>* missed) {
  switch (config_.mode) {
    case PlanMode::fixed:
      return std::nullopt;
    case PlanMode::repeating: {
      const Schedule& f = config_.first;
      const std::uint64_t length = f.end - f.start;  // steps - 1
      std::uint64_t k = 0;
      if (current >= f.start) k = (current - f.start) / config_.every + 1;
      const auto max = std::numeric_limits<std::uint64_t>::max();
      if (k > (max - f.start) / config_.every) return std::nullopt;
      const std::uint64_t start = f.start + k * config_.every;
      if (start > max - length) return std::nullopt;
      Schedule s = f;
      s.start = start;
      s.end = start + length;
      if (config_.until && s.end > *config_.until) return std::nullopt;
      return s;
    }
    case PlanMode::on_demand:
      while (!queue_.empty() && queue_.front().start <= current) {
        if (missed) missed->push_back(queue_.front());
        queue_.pop_front();
      }
      if (queue_.empty()) return std::nullopt;
      {
        const Schedule s = queue_.front();
        queue_.pop_front();
        return s;
      }
  }
  return std::nullopt;
}

RequestOutcome WindowPlan::request(std::uint64_t first_step, std::uint64_t steps,
                                   std::uint64_t current, const std::optional<Schedule>& planned) {
  RequestOutcome out;
  const auto max = std::numeric_limits<std::uint64_t>::max();
  out.window.start = first_step;
  out.window.warmup = config_.warmup;
  out.window.active = std::max<std::uint64_t>(steps, 1);
  const std::uint64_t length = config_.warmup + out.window.active - 1;
  out.window.end = first_step > max - length ? max : first_step + length;
  if (first_step <= current) {
    out.verdict = Verdict::past;
    return out;
  }
  if (planned && !is_never(*planned) && too_close(*planned, out.window)) {
    out.verdict = Verdict::overlaps;
    out.conflict = planned;
    return out;
  }
  for (const auto& q : queue_) {
    if (too_close(q, out.window)) {
      out.verdict = Verdict::overlaps;
      out.conflict = q;
      return out;
    }
  }
  const auto at = std::find_if(queue_.begin(), queue_.end(),
                               [&](const Schedule& q) { return q.start > first_step; });
  queue_.insert(at, out.window);
  out.verdict = Verdict::queued;
  return out;
}

}  // namespace chakrashim::window
