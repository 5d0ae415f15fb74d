#include "common/rank_totals.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>

namespace chakrashim::tools {

bool rank_lines_wanted(std::size_t ranks, bool verbose, bool quiet) {
  return !quiet && (verbose || ranks <= kRankLinesUpTo);
}

std::string totals_line(const RankTotals& t, double seconds) {
  std::vector<std::string> dirs;  // distinct, in the order first written
  for (const auto& path : t.output_paths) {
    const std::string dir = std::filesystem::path(path).parent_path().string();
    if (std::find(dirs.begin(), dirs.end(), dir) == dirs.end()) dirs.push_back(dir);
  }
  char time[32];
  std::snprintf(time, sizeof time, "%.2f s", seconds);
  std::string line = "chakrashim " + t.command + ": " + std::to_string(t.done) + " rank" + (t.done == 1 ? "" : "s") +
                     " " + t.verb + ", " + std::to_string(t.failed) + " failed";
  for (const auto& figure : t.figures) line += "; " + figure;
  line += "; " + std::string(time);
  if (!dirs.empty()) {
    line += "; " + t.output_kind + " in " + dirs[0];
    const std::size_t more = dirs.size() - 1;
    if (more > 0) line += " and " + std::to_string(more) + " more folder" + (more > 1 ? "s" : "");
  }
  return line;
}

}  // namespace chakrashim::tools
