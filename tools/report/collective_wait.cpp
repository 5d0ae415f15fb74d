#include "report/collective_wait.h"

#include <algorithm>
#include <map>

namespace chakrashim::tools::report {

namespace {

// Empty when every rank has the same collectives, by name, in order.
std::string mismatch(const std::vector<std::pair<std::uint64_t, const std::vector<CollectiveSpan>*>>& ranks) {
  const auto& [first_rank, first] = ranks.front();
  for (const auto& [rank, list] : ranks) {
    if (list->size() != first->size()) {
      return "rank " + std::to_string(rank) + " has " + std::to_string(list->size()) + " collectives, rank " +
             std::to_string(first_rank) + " has " + std::to_string(first->size());
    }
    for (std::size_t i = 0; i < list->size(); ++i) {
      if ((*list)[i].name != (*first)[i].name) {
        return "collective " + std::to_string(i + 1) + " is " + (*list)[i].name + " on rank " + std::to_string(rank) +
               " but " + (*first)[i].name + " on rank " + std::to_string(first_rank);
      }
    }
  }
  return {};
}

}  // namespace

CollectiveWaits collective_waits(const std::vector<std::pair<std::uint64_t, const std::vector<CollectiveSpan>*>>& ranks) {
  CollectiveWaits out;
  for (const auto& [rank, list] : ranks) {
    RankWait w;
    w.rank = rank;
    w.collectives = list->size();
    for (const auto& c : *list) w.in_collectives_ns += c.end - c.start;
    out.ranks.push_back(std::move(w));
  }
  if (ranks.size() < 2) {
    out.unmatched = "one rank: nothing to wait for";
    return out;
  }
  out.unmatched = mismatch(ranks);
  if (!out.unmatched.empty()) return out;
  out.matched = true;
  std::vector<std::map<std::uint64_t, std::int64_t>> by_step(ranks.size());
  for (std::size_t i = 0; i < ranks.front().second->size(); ++i) {
    std::size_t last = 0;
    for (std::size_t r = 1; r < ranks.size(); ++r)
      if ((*ranks[r].second)[i].start > (*ranks[last].second)[i].start) last = r;
    const std::int64_t arrival = (*ranks[last].second)[i].start;
    ++out.ranks[last].arrived_last;
    for (std::size_t r = 0; r < ranks.size(); ++r) {
      const CollectiveSpan& c = (*ranks[r].second)[i];
      const std::int64_t waited = std::clamp(arrival - c.start, std::int64_t{0}, c.end - c.start);
      out.ranks[r].waiting_ns += waited;
      by_step[r][c.step] += waited;
    }
  }
  for (std::size_t r = 0; r < ranks.size(); ++r)
    out.ranks[r].waiting_by_step.assign(by_step[r].begin(), by_step[r].end());
  return out;
}

}  // namespace chakrashim::tools::report
