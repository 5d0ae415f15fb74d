// Unit tests for tools/common/run_mix.h (issue #49): a set of ranks drawn
// from two runs is named for what it is; one run's set says nothing.
#include "common/run_mix.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "support/temp_dir.h"

namespace chakrashim::tools {
namespace {

TEST(MixedRuns, OneRunsRanksAndFilesThatDoNotSaySayNothing) {
  EXPECT_EQ(mixed_runs_detail({}), "");
  EXPECT_EQ(mixed_runs_detail({{0, "a", 2}, {1, "a", 2}}), "");
  EXPECT_EQ(mixed_runs_detail({{0, "a", 2}, {1, std::nullopt, std::nullopt}}), "");
}

TEST(MixedRuns, TwoRunsAreNamedWithTheirRanks) {
  EXPECT_EQ(mixed_runs_detail({{0, "b", 4}, {1, "a", 4}, {2, "b", 4}}),
            "the files come from 2 runs: rank 1 of run a, ranks 0,2 of run b");
}

TEST(MixedRuns, AOneRankRunOverATwoRankCaptureIsToldByItsWorldSizeAlone) {
  // The old capture's rank 1 and the new rank 0, written before runs had ids.
  EXPECT_EQ(mixed_runs_detail({{0, std::nullopt, 1}, {1, std::nullopt, 2}}),
            "the ranks name different world sizes: rank 0 of world size 1, rank 1 of world size 2; "
            "rank 1 cannot be of a run of 1 rank");
  EXPECT_EQ(mixed_runs_detail({{0, "x", 1}, {1, "y", 2}}),
            "the files come from 2 runs: rank 0 of run x, rank 1 of run y; the ranks name different world "
            "sizes: rank 0 of world size 1, rank 1 of world size 2; rank 1 cannot be of a run of 1 rank");
}

class RunOfFiles : public testing_support::TempDirTest {};

TEST_F(RunOfFiles, TheDeviceTracesEndSaysElseTheEts) {
  std::ofstream(path("dev.json")) << "{\"traceEvents\": [],\n\"chakrashim\": {\"version\": \"x\", \"ranks\": "
                                     "{\"filter\": null, \"world_size\": 4, \"run\": \"slurm:5.0\"}}\n}";
  std::ofstream(path("et.json")) << "{\"nodes\": [],\n  \"chakrashim\": {\"version\": \"x\", \"run\": \"slurm:6.0\", "
                                    "\"world_size\": 2}\n}";
  RankFiles f;
  f.rank = 3;
  f.device_path = path("dev.json");
  f.host_path = path("et.json");
  auto r = rank_run_of(f);
  EXPECT_EQ(r.run, std::optional<std::string>("slurm:5.0"));
  EXPECT_EQ(r.world_size, std::optional<std::uint64_t>(4));
  f.device_path.reset();
  r = rank_run_of(f);
  EXPECT_EQ(r.run, std::optional<std::string>("slurm:6.0"));
  EXPECT_EQ(r.world_size, std::optional<std::uint64_t>(2));
}

}  // namespace
}  // namespace chakrashim::tools
