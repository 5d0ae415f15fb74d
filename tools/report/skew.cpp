#include "report/skew.h"

#include <map>

namespace chakrashim::tools::report {

SkewSummary step_skew(const std::vector<RankStepTimes>& ranks) {
  std::map<std::uint64_t, std::vector<std::pair<std::uint64_t, std::int64_t>>> by_step;
  for (const auto& [rank, steps] : ranks)
    for (const auto& s : *steps)
      if (!s.partial) by_step[s.step].emplace_back(rank, s.dur_ns);
  SkewSummary out;
  std::map<std::uint64_t, std::uint32_t> slowest_counts;
  for (const auto& [step, times] : by_step) {
    if (times.size() < 2) continue;
    StepSkew k;
    k.step = step;
    k.ranks = static_cast<std::uint32_t>(times.size());
    std::int64_t sum = 0;
    bool first = true;
    for (const auto& [rank, dur] : times) {
      // Ties: the slowest is the lowest such rank, the fastest the highest,
      // so the output never depends on order and names two ranks even when
      // all are equal.
      if (first || dur > k.slowest_ns || (dur == k.slowest_ns && rank < k.slowest_rank)) {
        k.slowest_ns = dur;
        k.slowest_rank = rank;
      }
      if (first || dur < k.fastest_ns || (dur == k.fastest_ns && rank > k.fastest_rank)) {
        k.fastest_ns = dur;
        k.fastest_rank = rank;
      }
      first = false;
      sum += dur;
    }
    k.mean_ns = sum / static_cast<std::int64_t>(times.size());
    out.max_spread_ns = std::max(out.max_spread_ns, k.spread_ns());
    if (k.spread_ns() > 0) ++slowest_counts[k.slowest_rank];  // a tie has no slowest rank
    out.steps.push_back(k);
  }
  for (const auto& [rank, count] : slowest_counts) {
    if (count > out.slowest_count) {
      out.slowest_count = count;
      out.most_often_slowest = rank;
    }
  }
  return out;
}

}  // namespace chakrashim::tools::report
