// convert's totals line (tools/convert/convert_runner.h): what 512 ranks
// print instead of 512 lines.
#include "convert/convert_runner.h"

#include <gtest/gtest.h>

#include <array>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <new>

#include "convert/link_steps.h"
#include "files/byte_sink.h"

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

TEST(ConvertTotals, RanksNodesHowTheyWereLinkedAndTheFolder) {
  ConvertResult failed;
  failed.rank = 3;
  failed.linked = true;  // its link failed: not counted
  failed.error = "link: bad";
  ConvertResult in_memory = converted(0, 22, true, "/t/0_et/rank.0.et");
  in_memory.in_memory = true;
  const std::vector<ConvertResult> results = {in_memory, converted(1, 20, true, "/t/0_et/rank.1.et"),
                                              converted(2, 20, false, "/t/0_et/rank.2.et"), failed};
  EXPECT_EQ(totals_line(results, 1.5),
            "chakrashim convert: 3 ranks converted, 1 failed; 1 linked in memory; 1 linked through an ET+ file; "
            "62 nodes written; 1.50 s; .et in /t/0_et");
  // ET+ files given: nothing was linked, and the line says nothing of it.
  EXPECT_EQ(totals_line({converted(0, 22, false, "/sim/llm.0.et")}, 0.25),
            "chakrashim convert: 1 rank converted, 0 failed; 22 nodes written; 0.25 s; .et in /sim");
}

TEST(ConvertSummary, SaysHowTheRankWasLinked) {
  ConvertResult r = converted(4, 22, true, "/t/0_et/rank.4.et");
  r.in_memory = true;
  r.link_seconds = 0.25;
  r.seconds = 0.5;
  r.stats.collectives = 2;
  EXPECT_EQ(summary_line(r),
            "rank 4: linked in memory (0.25 s), 22 nodes (2 collectives, 0 sends, 0 receives) -> /t/0_et/rank.4.et "
            "(0.50 s)");
  r.in_memory = false;
  r.input = "/t/0_linked/rank-4.json";
  EXPECT_EQ(summary_line(r),
            "rank 4: linked -> /t/0_linked/rank-4.json (0.25 s), 22 nodes (2 collectives, 0 sends, 0 receives) -> "
            "/t/0_et/rank.4.et (0.50 s)");
}

// Issue #38: "1 dropped as dangling" said neither what nor whether it
// matters. The ET's root is harmless; an op left out is not run by ASTRA-sim.
TEST(ConvertSummary, SaysWhatTheNodesLeftOutAreAndWhetherItMatters) {
  GraphStats s;
  s.dropped_dangling = 1;
  s.dropped_roots = 1;
  EXPECT_EQ(unconnected_text(s),
            "1 node left out, as chakra_converter does (no dependency to or from it): the ET's root, harmless");
  s.dropped_dangling = 3;
  EXPECT_EQ(unconnected_text(s), "3 nodes left out, as chakra_converter does (no dependency to or from them): 2 ops "
                                 "that ASTRA-sim will not run (docs/convert.md)");
}

// Issue #34: a link step that throws while the rank's reader runs beside it.
// The reader is joined (told first, on the text path, that no more ET+
// comes) and the exception reaches the caller; with a std::thread there,
// its destructor called std::terminate and ended the CLI.
TEST(ConvertLinkSteps, ALinkThatThrowsJoinsTheReaderOfItsPipe) {
  const ConvertJob job{0, "/nonexistent/0_linked/rank-0.json", "/nonexistent/0_et/rank.0.et", link::RankJob{}, {}, {}};
  EtPlusRead read;
  ConvertResult out;
  const auto throws = [](const link::RankJob& j) -> link::RankResult {
    j.tee->write(R"({"schema": "1.1.1-chakra.0.0.4", "pid": 7, "nodes": [)");  // the reader waits for more
    throw std::bad_alloc();
  };
  EXPECT_THROW(link_then_read(job, read, out, throws), std::bad_alloc);
  EXPECT_FALSE(read.ok);  // the reader came to its input's end: an ET+ cut short
  EXPECT_FALSE(out.linked);
}

TEST(ConvertLinkSteps, APlanThatThrowsJoinsTheReaderOfTheHostEt) {
  ConvertJob job{0, "", "/nonexistent/0_et/rank.0.et", link::RankJob{}, {}, {}};
  job.link_first->host_path = "/nonexistent/0_chakra/rank-0.json";
  NodeEncoder encoder;
  EtPlusRead read;
  ConvertResult out;
  const auto throws = [](const link::RankJob&) -> link::RankPlan { throw std::bad_alloc(); };
  EXPECT_THROW(join_in_memory(job, encoder, read, out, throws), std::bad_alloc);
  EXPECT_FALSE(out.linked);
}

TEST(ConvertWorld, AWorldWithoutCollectivesAndAMissingRankWarn) {
  std::vector<ConvertResult> two = {converted(0, 22, true, "/t/0_et/rank.0.et"),
                                    converted(1, 22, true, "/t/0_et/rank.1.et")};
  auto warnings = world_warnings(two);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("a world of 2 ranks converted without any collective"), std::string::npos);
  two[1].stats.collectives = 3;
  EXPECT_TRUE(world_warnings(two).empty());
  // Rank 1 of a world of 3 (the process groups' size) left out.
  two[1].rank = 2;
  two[0].process_groups = {{"0", "default_pg", {}, 3}};
  warnings = world_warnings(two);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0], "rank 1 of world size 3 not converted: ASTRA-sim needs PREFIX.R.et for every NPU");
  // Where the capture's plan already said which ranks have no files, once is enough.
  EXPECT_TRUE(world_warnings(two, /*missing_said=*/true).empty());
  EXPECT_TRUE(world_warnings({converted(0, 22, true, "/t/0_et/rank.0.et")}).empty()) << "a world of one";
}

TEST(ConvertWorld, UnmatchedPointToPointMessagesWarn) {
  std::vector<ConvertResult> two = {converted(0, 22, true, "/t/0_et/rank.0.et"),
                                    converted(1, 22, true, "/t/0_et/rank.1.et")};
  using Key = std::array<std::int64_t, 4>;
  two[0].sim.p2p_messages[Key{0, 1, 0, 512}].sends = 4;
  two[1].sim.p2p_messages[Key{0, 1, 0, 512}].receives = 4;
  EXPECT_TRUE(unmatched_p2p_lines(two).empty());
  two[1].sim.p2p_messages[Key{0, 1, 0, 512}].receives = 3;
  auto lines = unmatched_p2p_lines(two);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].rfind("rank 0 sends 4 and rank 1 receives 3 message(s) of 512 bytes, tag 0: ASTRA-sim will "
                           "wait for ever", 0), 0u) << lines[0];
  // Rank 2's receives are not in this conversion: not counted against it.
  two[0].sim.p2p_messages[Key{0, 2, 0, 64}].sends = 1;
  EXPECT_EQ(unmatched_p2p_lines(two).size(), 1u);
  // Unmapped ops are said with their reason.
  two[1].sim.p2p_unmapped = 2;
  two[1].sim.p2p_unmapped_why = "node 7 (c10d::recv_): why";
  bool said = false;
  for (const auto& w : world_warnings(two))
    said = said || w == "rank 1: 2 point-to-point ops are left as compute, so ASTRA-sim will not couple this rank "
                        "to its peers: node 7 (c10d::recv_): why";
  EXPECT_TRUE(said);
}

TEST(ConvertWorld, HostCollectivesInAJobOfManyGroupsWarn) {
  std::vector<ConvertResult> two = {converted(0, 22, true, "/t/0_et/rank.0.et"),
                                    converted(1, 22, true, "/t/0_et/rank.1.et")};
  for (auto& r : two) {
    r.stats.collectives = r.stats.host_collectives = 3;
    r.process_groups = {{"0", "default_pg", {}, 2}, {"1", "", {0, 1}, 2}};
    r.sim.unnamed_collectives = 3;  // torch's recorder: "<Object>"
  }
  const auto warnings = world_warnings(two);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("written for the default group"), std::string::npos) << warnings[0];
  // chakrashim's recorder names each op's group: nothing to say.
  for (auto& r : two) r.sim.unnamed_collectives = 0;
  EXPECT_TRUE(world_warnings(two).empty());
}

TEST(ConvertWorld, TheCommGroupFileHoldsEveryRanksGroups) {
  // A 2x2 mesh: each rank's ET lists only its own groups.
  const std::string dir = ::testing::TempDir() + "/comm_groups_all_" + std::to_string(::getpid());
  ASSERT_EQ(::mkdir(dir.c_str(), 0700), 0);
  std::vector<ConvertResult> ranks = {converted(0, 22, true, dir + "/rank.0.et"),
                                      converted(3, 22, true, dir + "/rank.3.et")};
  ranks[0].process_groups = {{"0", "default_pg", {}, 4}, {"1", "mesh_dp", {0, 2}, 2}, {"3", "mesh_tp", {0, 1}, 2}};
  ranks[1].process_groups = {{"0", "default_pg", {}, 4}, {"2", "mesh_dp", {1, 3}, 2}, {"4", "mesh_tp", {2, 3}, 2}};
  std::string error;
  EXPECT_EQ(write_comm_groups(ranks, error),
            "5 process groups -> " + dir + "/rank.comm_groups.json (ASTRA-sim's --comm-group-configuration)");
  std::ifstream in(dir + "/rank.comm_groups.json");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "{\"1\":[0,2],\"3\":[0,1],\"2\":[1,3],\"4\":[2,3]}\n");
  std::remove((dir + "/rank.comm_groups.json").c_str());
  std::remove(dir.c_str());
}

TEST(ConvertWorld, TheCommGroupFileOnlyForMoreThanOneGroup) {
  // Beside the ranks' .et files, in the folder they were written to.
  const std::string dir = ::testing::TempDir() + "/comm_groups_" + std::to_string(::getpid());
  ASSERT_EQ(::mkdir(dir.c_str(), 0700), 0);
  std::vector<ConvertResult> ranks = {converted(0, 22, true, dir + "/rank.0.et")};
  ranks[0].process_groups = {{"0", "default_pg", {}, 2}};
  std::string error;
  EXPECT_EQ(write_comm_groups(ranks, error), "");
  ranks[0].process_groups.push_back({"1", "", {0, 1}, 2});
  const std::string line = write_comm_groups(ranks, error);
  EXPECT_EQ(error, "");
  EXPECT_EQ(line, "2 process groups -> " + dir + "/rank.comm_groups.json (ASTRA-sim's --comm-group-configuration)");
  std::ifstream in(dir + "/rank.comm_groups.json");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "{\"1\":[0,1]}\n");
  std::remove((dir + "/rank.comm_groups.json").c_str());
  std::remove(dir.c_str());
}

}  // namespace
}  // namespace chakrashim::tools::convert
