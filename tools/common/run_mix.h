// Files of two runs in one capture (issue #49): every file chakrashim
// writes names its run (the launch's id) and world size; a set of ranks
// that name two is two captures mixed, and every figure drawn across them
// (skew, a linked or converted set) is wrong. `check` says it as the rule
// ranks.mixed_runs; link, convert and report refuse such a set.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config/value_grammar.h"
#include "common/capture_scan.h"

namespace chakrashim::tools {

struct RankRunId {
  std::uint64_t rank = 0;
  std::optional<std::string> run;          // nullopt: the file does not say
  std::optional<std::uint64_t> world_size;
};

// What is mixed, as one clause list, or empty when the ranks agree (files
// that do not say are left out of the comparison):
//   {0: run a, world 1}, {1: run b, world 2} ->
//   "the files come from 2 runs: rank 0 of run a, rank 1 of run b; the ranks
//    name different world sizes: rank 0 of world size 1, rank 1 of world size 2;
//    rank 1 cannot be of a run of 1 rank"
std::string mixed_runs_detail(const std::vector<RankRunId>& ranks);

// The run and world size one rank's files name: its device trace's end,
// else its ET's (chakrashim's ETs end with the same object).
RankRunId rank_run_of(const RankFiles& files);

// One line for the user, empty when the group's ranks (those `only` lets
// through) are of one run: "run 0: the files come from 2 runs: ...".
std::string mixed_runs_line(const CaptureGroup& group, const std::optional<config::RankSet>& only = std::nullopt);

}  // namespace chakrashim::tools
