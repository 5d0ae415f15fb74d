// How a command that works through a capture's ranks (link, convert) reports
// them: a line per rank for a small capture or on request, otherwise only
// the ranks with problems, then one totals line. Kept here so the commands
// agree on the threshold and the shape of the totals. Pure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/rank_scale.h"

namespace chakrashim::tools {

// Up to this many ranks, a line each; above, only with --verbose: nobody
// reads 512 of them.
inline constexpr std::size_t kRankLinesUpTo = kRanksShownOneByOne;

// Whether every rank gets its line (`quiet`: problems only, always).
bool rank_lines_wanted(std::size_t ranks, bool verbose, bool quiet);

struct RankTotals {
  std::string command;  // "link"
  std::string verb;     // "linked": "512 ranks linked, 0 failed"
  std::uint64_t done = 0, failed = 0;
  std::vector<std::string> figures;  // "1843200 GPU ops linked", joined by "; "
  std::string output_kind;           // "ET+": "ET+ in /t/0_linked"
  std::vector<std::string> output_paths;  // the files written; their folders are named

  void add_output(const std::string& path) { output_paths.push_back(path); }
};

// The line that ends the run:
//   "chakrashim link: 512 ranks linked, 0 failed; 1843200 GPU ops linked; 6.52 s; ET+ in /t/0_linked"
// A second folder and more: "... in /t/0_linked and 1 more folder".
std::string totals_line(const RankTotals& totals, double seconds);

}  // namespace chakrashim::tools
