#include "writers/recording_cost.h"

#include <algorithm>

namespace chakrashim::writers {

void RecordingCostMeter::add_thread(std::vector<OpInterval> spans) {
  // Parents before their children: by start, the longer first.
  std::sort(spans.begin(), spans.end(), [](const OpInterval& a, const OpInterval& b) {
    return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.end_ns > b.end_ns;
  });
  struct Open {
    const OpInterval* span;
    const OpInterval* last_child;  // the child that ended last so far
  };
  std::vector<Open> stack;
  for (const OpInterval& s : spans) {
    while (!stack.empty() && stack.back().span->end_ns <= s.start_ns) stack.pop_back();
    if (!stack.empty()) {
      Open& parent = stack.back();
      const OpInterval* before = parent.last_child;
      if (gaps_.size() < kMaxPairs && parent.span->aten && s.aten && before != nullptr && before->aten &&
          s.start_ns >= before->end_ns)
        gaps_.push_back(s.start_ns - before->end_ns);
      parent.last_child = &s;
    }
    stack.push_back({&s, nullptr});
  }
}

std::optional<RecordingCost> RecordingCostMeter::result() const {
  if (gaps_.empty()) return std::nullopt;
  std::vector<std::int64_t> gaps = gaps_;
  const auto mid = gaps.begin() + static_cast<std::ptrdiff_t>(gaps.size() / 2);
  std::nth_element(gaps.begin(), mid, gaps.end());
  const std::int64_t bound = kOutlierFactor * std::max<std::int64_t>(*mid, 1);
  std::int64_t sum = 0;
  std::uint64_t kept = 0;
  for (const auto g : gaps_) {
    if (g > bound) continue;
    sum += g;
    ++kept;
  }
  RecordingCost cost;
  cost.gap_ns = cost.per_op_ns = sum / static_cast<std::int64_t>(kept);
  cost.pairs = kept;
  cost.median_ns = *mid;
  return cost;
}

std::vector<std::int64_t> StepRing::take() {
  std::vector<std::int64_t> out;
  for (std::size_t i = 0; i < count_; ++i) out.push_back(ns_[(next_ + kSteps - count_ + i) % kSteps]);
  next_ = count_ = 0;
  return out;
}

std::optional<std::int64_t> step_cost_per_op(std::vector<std::int64_t> unrecorded,
                                             std::vector<std::int64_t> recorded, double ops_per_step) {
  const auto f = step_figure(std::move(unrecorded), std::move(recorded), ops_per_step);
  if (!f) return std::nullopt;
  return f->per_op_ns;
}

std::optional<StepFigure> step_figure(std::vector<std::int64_t> unrecorded, std::vector<std::int64_t> recorded,
                                      double ops_per_step) {
  if (unrecorded.size() < 2 || recorded.size() < 2 || !(ops_per_step >= 1)) return std::nullopt;
  std::sort(unrecorded.begin(), unrecorded.end());
  std::sort(recorded.begin(), recorded.end());
  const std::int64_t delta = recorded[0] - unrecorded[0];
  if (delta <= 0) return std::nullopt;
  const std::int64_t noise = (recorded[1] - recorded[0]) + (unrecorded[1] - unrecorded[0]);
  return StepFigure{static_cast<std::int64_t>(static_cast<double>(delta) / ops_per_step),
                    static_cast<std::int64_t>(static_cast<double>(noise) / ops_per_step)};
}

std::optional<RecordingCost> recording_cost_of(const std::optional<RecordingCost>& gaps,
                                               std::optional<StepFigure> step, std::uint64_t unrecorded_steps) {
  if (!gaps && !step) return std::nullopt;
  RecordingCost cost = gaps.value_or(RecordingCost{});
  if (step) cost.step_ns = step->per_op_ns;
  cost.unrecorded_steps = unrecorded_steps;
  if (!step || step->per_op_ns <= cost.gap_ns) return cost;
  const std::string figure = "the steps' figure (" + std::to_string(step->per_op_ns) + " ns an op)";
  if (2 * step->noise_ns > step->per_op_ns) {
    cost.step_refused = figure + " is within its own noise: the two fastest steps before the window and in it "
                                 "differ by " + std::to_string(step->noise_ns) + " ns an op";
  } else if (gaps && step->per_op_ns > kStepCapFactor * cost.gap_ns) {
    cost.step_refused = figure + " is more than " + std::to_string(kStepCapFactor) + " times the gaps' (" +
                        std::to_string(cost.gap_ns) +
                        " ns): the steps before the window did other work or ran under other load (an eval, "
                        "the job's own profiler, a changing batch)";
  } else {
    cost.per_op_ns = step->per_op_ns;
    cost.from_steps = true;
  }
  return cost;
}

}  // namespace chakrashim::writers
