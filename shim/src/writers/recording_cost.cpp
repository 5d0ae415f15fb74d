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
  return RecordingCost{sum / static_cast<std::int64_t>(kept), kept, *mid};
}

}  // namespace chakrashim::writers
