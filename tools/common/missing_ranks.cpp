#include "common/missing_ranks.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "common/trace_tail.h"
#include "config/value_grammar.h"

namespace chakrashim::tools {

std::string rank_ranges(const std::vector<std::uint64_t>& ranks) {
  std::string out;
  for (std::size_t i = 0; i < ranks.size();) {
    std::size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    out += (out.empty() ? "" : ",") + std::to_string(ranks[i]);
    if (j > i) out += "-" + std::to_string(ranks[j]);
    i = j + 1;
  }
  return out;
}

std::optional<RankExpectation> expectation_from_tail(std::string_view tail) {
  const auto meta = metadata_from_tail(tail);
  if (!meta || !meta->contains("ranks") || !(*meta)["ranks"].is_object()) return std::nullopt;
  const auto& ranks = (*meta)["ranks"];
  RankExpectation out;
  if (ranks.contains("world_size") && ranks["world_size"].is_number_unsigned())
    out.world_size = ranks["world_size"].get<std::uint64_t>();
  if (ranks.contains("filter") && ranks["filter"].is_string()) out.filter = ranks["filter"].get<std::string>();
  return out;
}

std::vector<std::uint64_t> missing_ranks(const CaptureGroup& group, const RankExpectation& expected) {
  std::vector<std::uint64_t> out;
  if (!expected.world_size) return out;
  std::optional<config::RankSet> filter;
  if (expected.filter) filter = config::parse_rank_list(*expected.filter);
  for (std::uint64_t r = 0; r < *expected.world_size; ++r) {
    if (filter && !filter->contains(r)) continue;
    const bool there = std::any_of(group.ranks.begin(), group.ranks.end(), [r](const RankFiles& f) { return f.rank == r; });
    if (!there) out.push_back(r);
  }
  return out;
}

std::string missing_ranks_line(const CaptureGroup& group) {
  const auto with_device = std::find_if(group.ranks.begin(), group.ranks.end(),
                                        [](const RankFiles& f) { return f.device_path.has_value(); });
  if (group.label.empty() || with_device == group.ranks.end()) return {};
  const auto expected = expectation_from_tail(read_tail(*with_device->device_path));
  if (!expected) return {};
  const auto missing = missing_ranks(group, *expected);
  if (missing.empty()) return {};
  std::vector<std::uint64_t> present;
  for (const auto& f : group.ranks) present.push_back(f.rank);
  return "run " + group.label + ": " + (missing.size() == 1 ? "rank " : "ranks ") + rank_ranges(missing) +
         " of world size " + std::to_string(*expected->world_size) + (missing.size() == 1 ? " has" : " have") +
         " no files (only " + (present.size() == 1 ? "rank " : "ranks ") + rank_ranges(present) +
         (present.size() == 1 ? " is" : " are") + " there); `chakrashim check` says more";
}

}  // namespace chakrashim::tools
