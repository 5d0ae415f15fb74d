// convert's totals line (tools/convert/convert_runner.h): what 512 ranks
// print instead of 512 lines.
#include "convert/convert_runner.h"

#include <gtest/gtest.h>

namespace chakrashim::tools::convert {
namespace {

ConvertResult converted(std::uint64_t rank, std::uint64_t nodes, bool linked, std::string output) {
  ConvertResult r;
  r.rank = rank;
  r.ok = true;
  r.linked = linked;
  r.stats.written = nodes;
  r.output = std::move(output);
  return r;
}

TEST(ConvertTotals, RanksNodesLinkedFirstAndTheFolder) {
  ConvertResult failed;
  failed.rank = 2;
  failed.linked = true;  // its link failed: not counted as linked first
  failed.error = "link: bad";
  const std::vector<ConvertResult> results = {converted(0, 22, true, "/t/0_et/rank.0.et"),
                                              converted(1, 20, false, "/t/0_et/rank.1.et"), failed};
  EXPECT_EQ(totals_line(results, 1.5),
            "chakrashim convert: 2 ranks converted, 1 failed; 1 linked first; 42 nodes written; 1.50 s; "
            ".et in /t/0_et");
  // Every ET+ up to date: nothing was linked, and the line says nothing of it.
  EXPECT_EQ(totals_line({converted(0, 22, false, "/sim/llm.0.et")}, 0.25),
            "chakrashim convert: 1 rank converted, 0 failed; 22 nodes written; 0.25 s; .et in /sim");
}

}  // namespace
}  // namespace chakrashim::tools::convert
