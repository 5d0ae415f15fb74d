#include "common/run_mix.h"

#include <algorithm>
#include <map>

#include "common/missing_ranks.h"
#include "common/trace_tail.h"

namespace chakrashim::tools {

namespace {

std::string ranks_of(const std::vector<std::uint64_t>& ranks) {
  return std::string(ranks.size() == 1 ? "rank " : "ranks ") + rank_ranges(ranks);
}

}  // namespace

std::string mixed_runs_detail(const std::vector<RankRunId>& ranks) {
  std::map<std::string, std::vector<std::uint64_t>> by_run;
  std::map<std::uint64_t, std::vector<std::uint64_t>> by_world;
  for (const auto& r : ranks) {
    if (r.run) by_run[*r.run].push_back(r.rank);
    if (r.world_size) by_world[*r.world_size].push_back(r.rank);
  }
  for (auto& [world, rs] : by_world) std::sort(rs.begin(), rs.end());
  for (auto& [run, rs] : by_run) std::sort(rs.begin(), rs.end());
  std::string detail;
  const auto add = [&](const std::string& part) { detail += (detail.empty() ? "" : "; ") + part; };
  if (by_run.size() > 1) {
    std::string runs;
    for (const auto& [run, rs] : by_run) runs += (runs.empty() ? "" : ", ") + ranks_of(rs) + " of run " + run;
    add("the files come from " + std::to_string(by_run.size()) + " runs: " + runs);
  }
  if (by_world.size() > 1) {
    std::string worlds;
    for (const auto& [world, rs] : by_world)
      worlds += (worlds.empty() ? "" : ", ") + ranks_of(rs) + " of world size " + std::to_string(world);
    add("the ranks name different world sizes: " + worlds);
  }
  // Where runs are mixed, a rank at or past the smallest world size named
  // is another run's (the files of one run name one world size).
  if (!detail.empty() && !by_world.empty()) {
    const std::uint64_t smallest = by_world.begin()->first;
    std::vector<std::uint64_t> beyond;
    for (const auto& r : ranks)
      if (r.rank >= smallest && std::find(beyond.begin(), beyond.end(), r.rank) == beyond.end())
        beyond.push_back(r.rank);
    std::sort(beyond.begin(), beyond.end());
    if (!beyond.empty())
      add(ranks_of(beyond) + " cannot be of a run of " + std::to_string(smallest) + " rank" +
          (smallest == 1 ? "" : "s"));
  }
  return detail;
}

RankRunId rank_run_of(const RankFiles& files) {
  RankRunId out;
  out.rank = files.rank;
  const auto string_at = [](const nlohmann::json& o, const char* key) -> std::optional<std::string> {
    const auto it = o.find(key);
    if (it == o.end() || !it->is_string()) return std::nullopt;
    return it->get<std::string>();
  };
  const auto u64_at = [](const nlohmann::json& o, const char* key) -> std::optional<std::uint64_t> {
    const auto it = o.find(key);
    if (it == o.end() || !it->is_number_unsigned()) return std::nullopt;
    return it->get<std::uint64_t>();
  };
  if (files.device_path) {
    const auto meta = metadata_from_tail(read_tail(*files.device_path));
    if (meta && meta->contains("ranks") && (*meta)["ranks"].is_object()) {
      out.run = string_at((*meta)["ranks"], "run");
      out.world_size = u64_at((*meta)["ranks"], "world_size");
    }
  }
  if (files.host_path && (!out.run || !out.world_size)) {
    if (const auto meta = metadata_from_tail(read_tail(*files.host_path)); meta && meta->is_object()) {
      if (!out.run) out.run = string_at(*meta, "run");
      if (!out.world_size) out.world_size = u64_at(*meta, "world_size");
    }
  }
  return out;
}

std::string mixed_runs_line(const CaptureGroup& group, const std::optional<config::RankSet>& only) {
  std::vector<RankRunId> runs;
  for (const auto& f : group.ranks)
    if (!only || only->contains(f.rank)) runs.push_back(rank_run_of(f));
  const std::string detail = mixed_runs_detail(runs);
  if (detail.empty()) return {};
  return (group.label.empty() ? std::string("the files given") : "run " + group.label) + ": " + detail;
}

}  // namespace chakrashim::tools
