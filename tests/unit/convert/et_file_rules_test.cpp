// check's .et rules (check/et_file_rules.h) on node lists made wrong on
// purpose, one defect each, and on good ones: dangling deps, cycles, node
// types, comm attributes, collectives across ranks, missing ranks.
// In the convert test binary: its rules are pure, but their reader
// (et_file_reader_test.cpp) needs protobuf.
#include "check/et_file_rules.h"

#include <gtest/gtest.h>

namespace chakrashim::tools::check {
namespace {

EtFileNode et_node(std::uint64_t id, int type, std::vector<std::uint64_t> data = {},
                   std::vector<std::uint64_t> ctrl = {}) {
  EtFileNode n;
  n.id = id;
  n.name = "op" + std::to_string(id);
  n.type = type;
  n.data_deps = std::move(data);
  n.ctrl_deps = std::move(ctrl);
  n.is_cpu_op = type != 7;
  return n;
}

EtFileNode allreduce(std::uint64_t id, std::uint64_t after, std::int64_t size = 4096) {
  EtFileNode n = et_node(id, 7, {after});
  n.comm_type = 0;
  n.comm_size = size;
  return n;
}

EtFile good_rank(std::uint64_t rank) {
  EtFile f;
  f.rank = rank;
  f.path = "/t/0_et/rank." + std::to_string(rank) + ".et";
  f.nodes = {et_node(1, 4), et_node(2, 4, {1}, {1}), allreduce(3, 2), et_node(4, 4, {3}, {1})};
  return f;
}

std::vector<std::string> rules_of(const std::vector<EtFinding>& found) {
  std::vector<std::string> out;
  for (const auto& f : found) out.push_back(f.rule);
  return out;
}

using Rules = std::vector<std::string>;

TEST(EtFileRules, AGoodFilePasses) {
  EtFileFigures fig;
  EXPECT_EQ(rules_of(check_et_file(good_rank(0), &fig)), Rules{});
  EXPECT_EQ(fig.nodes, 4u);
  EXPECT_EQ(fig.collectives, 1u);
}

TEST(EtFileRules, ComputeThatCannotFitTheWindowIsAWarning) {
  // Window 10 ms less 1 ms of recording cost: 9 ms. ASTRA-sim runs one CPU
  // node at a time: CPU nodes of 4 + 4 + 3 ms (threads that overlapped in
  // the job) take 11 ms at least, 1.22 times the window.
  EtFile f = good_rank(0);
  f.window_ns = 10'000'000;
  f.cost_taken_ns = 1'000'000;
  f.nodes[0].duration_micros = 4000;
  f.nodes[1].duration_micros = 4000;
  f.nodes[3].duration_micros = 3000;
  auto found = check_et_file(f);
  ASSERT_EQ(rules_of(found), Rules{"et.compute_exceeds_window"});
  EXPECT_EQ(found[0].severity, EtSeverity::warning);
  EXPECT_NE(found[0].detail.find("its CPU nodes add up to 11.00 ms, 1.22 times its captured window (10.00 ms less "
                                 "1.00 ms of recording cost): ASTRA-sim runs one CPU node at a time"),
            std::string::npos)
      << found[0].detail;
  // Within 15% of the window (10 ms of 9 ms), on another kind of node, or
  // without a window (another tool's file): nothing.
  f.nodes[3].duration_micros = 2000;
  EXPECT_EQ(rules_of(check_et_file(f)), Rules{});
  f.nodes[3].duration_micros = 3000;
  f.nodes[1].is_cpu_op = false;  // GPU compute runs beside the CPU ops
  EXPECT_EQ(rules_of(check_et_file(f)), Rules{});
  f.nodes[1].is_cpu_op = true;
  f.window_ns.reset();
  EXPECT_EQ(rules_of(check_et_file(f)), Rules{});
}

TEST(EtFileRules, ADepOnANodeNotInTheFileIsAnError) {
  EtFile f = good_rank(0);
  f.nodes[0].ctrl_deps = {0};  // Chakra's thread root on the dropped process root
  const auto found = check_et_file(f);
  ASSERT_EQ(rules_of(found), Rules{"et.dep_missing"});
  EXPECT_EQ(found[0].severity, EtSeverity::error);
  EXPECT_NE(found[0].detail.find("Node 0 in ctrl_dep graph, but not found in index"), std::string::npos)
      << found[0].detail;
}

TEST(EtFileRules, ACycleIsAnErrorThroughCtrlDepsToo) {
  EtFile f = good_rank(0);
  f.nodes[1].data_deps = {4};  // 2 -> 4 -> 3 -> 2
  EXPECT_EQ(rules_of(check_et_file(f)), Rules{"et.cycle"});
  EtFile g = good_rank(0);
  g.nodes[0].ctrl_deps = {4};  // 1 -> 4 (ctrl) ... 4 -> 1 (ctrl): the feeder resolves both
  EXPECT_EQ(rules_of(check_et_file(g)), Rules{"et.cycle"});
}

TEST(EtFileRules, NodeTypesAsAstraSimKnowsThem) {
  EtFile f = good_rank(0);
  f.nodes[1].type = 9;
  EXPECT_EQ(rules_of(check_et_file(f)), Rules{"et.node_type"});
  f.nodes[1].type = 1;
  EXPECT_EQ(rules_of(check_et_file(f)), Rules{"et.node_type"}) << "METADATA: ASTRA-sim's statistics assert";
  f.nodes[1].type = 0;
  const auto found = check_et_file(f);
  ASSERT_EQ(rules_of(found), Rules{"et.node_type"});
  EXPECT_EQ(found[0].severity, EtSeverity::warning) << "INVALID is skipped";
}

TEST(EtFileRules, CommNodesNeedTypeSizeAndAnIntegerGroupOffTheCpu) {
  EtFile f = good_rank(0);
  f.nodes[2].comm_type.reset();
  EXPECT_EQ(rules_of(check_et_file(f)), Rules{"et.comm_attrs"});
  f = good_rank(0);
  f.nodes[2].comm_size.reset();
  EXPECT_EQ(rules_of(check_et_file(f)), Rules{"et.comm_attrs"});
  f = good_rank(0);
  f.nodes[2].comm_type = 9;  // BARRIER
  EXPECT_EQ(rules_of(check_et_file(f)), Rules{"et.comm_attrs"});
  f = good_rank(0);
  f.nodes[2].pg_name = "default_pg";
  EXPECT_EQ(rules_of(check_et_file(f)), Rules{"et.comm_attrs"});
  f.nodes[2].pg_name = "1";
  EXPECT_EQ(rules_of(check_et_file(f)), Rules{});
  f.nodes[2].is_cpu_op = true;
  EXPECT_EQ(rules_of(check_et_file(f)), Rules{"et.node_attrs"});
  f.nodes[1].is_cpu_op.reset();
  f.nodes[2].is_cpu_op = false;
  EXPECT_EQ(rules_of(check_et_file(f)), Rules{"et.node_attrs"});
}

TEST(EtFileRules, OneFindingPerRuleAndFileWithTheCountOfTheOthers) {
  EtFile f = good_rank(0);
  f.nodes.push_back(allreduce(5, 4));
  f.nodes.push_back(allreduce(6, 5));
  for (auto i : {2, 4, 5}) f.nodes[i].comm_size.reset();
  const auto found = check_et_file(f);
  ASSERT_EQ(rules_of(found), Rules{"et.comm_attrs"});
  EXPECT_NE(found[0].detail.find("node 3 (op3) has no comm_size (and 2 more)"), std::string::npos) << found[0].detail;
}

TEST(EtFileRules, ASendNeedsItsPeer) {
  EtFile f = good_rank(0);
  f.nodes[2].type = 5;
  f.nodes[2].comm_type.reset();
  EXPECT_EQ(rules_of(check_et_file(f)), Rules{"et.comm_attrs"});
  f.nodes[2].comm_dst = 1;
  EXPECT_EQ(rules_of(check_et_file(f)), Rules{});
}

EtFileNode p2p(std::uint64_t id, std::uint64_t after, bool send, std::int64_t src, std::int64_t dst,
               std::int64_t tag = 0, std::int64_t size = 512) {
  EtFileNode n = et_node(id, send ? 5 : 6, {after});
  n.is_cpu_op = false;
  n.comm_src = src;
  n.comm_dst = dst;
  n.comm_tag = tag;
  n.comm_size = size;
  return n;
}

// Two pipeline stages: rank 0 sends an activation, rank 1 sends its gradient back.
std::vector<EtFile> two_stages() {
  std::vector<EtFile> files = {good_rank(0), good_rank(1)};
  files[0].nodes.push_back(p2p(5, 4, true, 0, 1));
  files[0].nodes.push_back(p2p(6, 5, false, 1, 0, 3));
  files[1].nodes.push_back(p2p(5, 4, false, 0, 1));
  files[1].nodes.push_back(p2p(6, 5, true, 1, 0, 3));
  return files;
}

TEST(EtFileRules, SendsAndReceivesThatMatchAcrossRanksPass) {
  const auto files = two_stages();
  EXPECT_EQ(rules_of(check_et_file(files[0])), Rules{});
  EXPECT_EQ(rules_of(check_et_file(files[1])), Rules{});
  EXPECT_EQ(rules_of(check_et_set(files)), Rules{});
}

TEST(EtFileRules, AMessageSentAndNotReceivedIsAnError) {
  auto files = two_stages();
  files[1].nodes[4].comm_tag = 1;  // received under another tag
  const auto found = check_et_set(files);
  ASSERT_EQ(rules_of(found), (Rules{"et.p2p_match", "et.p2p_match"}));
  EXPECT_EQ(found[0].detail, "rank 0 sends 1 and rank 1 receives 0 message(s) of 512 bytes, tag 0: the simulation "
                             "would hang on the unmatched ones");
  EXPECT_EQ(found[1].detail, "rank 0 sends 0 and rank 1 receives 1 message(s) of 512 bytes, tag 1: the simulation "
                             "would hang on the unmatched ones");
  EXPECT_EQ(*found[0].rank, 0u) << "the rank with the message too many";
  EXPECT_EQ(*found[1].rank, 1u);
  // Rank 1's file not given: its side is not judged.
  EXPECT_EQ(rules_of(check_et_set({files[0]})), Rules{});
}

TEST(EtFileRules, ASendFromAnotherRanksEndStopsAstraSim) {
  auto files = two_stages();
  files[1].nodes[5].comm_src = 0;  // a send from rank 0 in rank 1's file
  const auto found = check_et_file(files[1]);
  ASSERT_EQ(rules_of(found), Rules{"et.comm_attrs"});
  EXPECT_NE(found[0].detail.find("is a send from rank 0 in rank 1's file: ASTRA-sim stops"), std::string::npos)
      << found[0].detail;
}

TEST(EtFileRules, AFileThatDidNotDecodeSaysOnlyThat) {
  EtFile f = good_rank(0);
  f.read_error = "ends early";
  EXPECT_EQ(rules_of(check_et_file(f)), Rules{"et.read"});
}

TEST(EtFileRules, EqualCollectivesAcrossRanksPass) {
  EXPECT_EQ(rules_of(check_et_set({good_rank(0), good_rank(1)})), Rules{});
}

TEST(EtFileRules, UnequalCollectivesAcrossRanksAreAnError) {
  EtFile one = good_rank(1);
  one.nodes.push_back(allreduce(5, 4));
  auto found = check_et_set({good_rank(0), one});
  ASSERT_EQ(rules_of(found), Rules{"et.collectives_match"});
  EXPECT_EQ(found[0].severity, EtSeverity::error);
  EXPECT_EQ(found[0].rank, 1u);
  one = good_rank(1);
  one.nodes[2].comm_type = 2;  // ALL_GATHER where rank 0 all-reduces
  found = check_et_set({good_rank(0), one});
  ASSERT_EQ(rules_of(found), Rules{"et.collectives_match"});
  EXPECT_NE(found[0].detail.find("ALL_GATHER"), std::string::npos) << found[0].detail;
  one = good_rank(1);
  one.nodes[2].comm_size = 8;
  found = check_et_set({good_rank(0), one});
  ASSERT_EQ(rules_of(found), Rules{"et.collectives_match"});
  EXPECT_EQ(found[0].severity, EtSeverity::warning) << "sizes differ: a warning";
}

TEST(EtFileRules, GroupsAreComparedAmongTheirOwnRanks) {
  // Ranks 0 and 1 all-reduce in group 1, rank 2 is not in it.
  std::vector<EtFile> files = {good_rank(0), good_rank(1), good_rank(2)};
  for (std::uint64_t r = 0; r < 2; ++r) {
    files[r].nodes.push_back(allreduce(5, 4));
    files[r].nodes.back().pg_name = "1";
  }
  EXPECT_EQ(rules_of(check_et_set(files)), Rules{});
}

TEST(EtFileRules, AWorldWithoutCollectivesAndAMissingRankWarn) {
  EtFile a = good_rank(0), b = good_rank(2);
  for (EtFile* f : {&a, &b}) {
    f->nodes.erase(f->nodes.begin() + 2);
    f->nodes[2].data_deps = {2};
  }
  const auto found = check_et_set({a, b});
  EXPECT_EQ(rules_of(found), (Rules{"et.rank_missing", "et.no_collectives"}));
  for (const auto& f : found) EXPECT_EQ(f.severity, EtSeverity::warning);
  EXPECT_EQ(found[0].rank, 1u);
}

TEST(EtFileRules, TheWorldFromTheProcessGroupsNamesARankMissingAtTheEnd) {
  EtFile a = good_rank(0);
  EtFileNode pg = et_node(9, 1);
  pg.world = 2;
  a.nodes.push_back(pg);
  const auto found = check_et_set({a});
  ASSERT_EQ(rules_of(found), Rules{"et.rank_missing"});
  EXPECT_EQ(found[0].rank, 1u);
}

}  // namespace
}  // namespace chakrashim::tools::check
