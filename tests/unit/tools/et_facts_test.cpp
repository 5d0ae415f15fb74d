// Unit tests for EtFacts (tools/check/et_facts.h): op nodes, the root, the
// seven attrs and the outermost step markers.
#include "check/et_facts.h"

#include <gtest/gtest.h>

#include "support/builders.h"

namespace chakrashim::tools::check {
namespace {

using testing_support::et_node;

TEST(EtFacts, FindsOutermostMarkersThroughCtrlDeps) {
  EtFacts f("Optimizer.step#");
  f.add(et_node(2, "[pytorch|profiler|execution_trace|thread]", 1, 0));
  f.add(et_node(3, "Optimizer.step#Wrapper.step", 2, 10));
  f.add(et_node(4, "aten::add_", 3, 11));
  f.add(et_node(5, "Optimizer.step#SGD.step", 4, 12));  // nested under a marker
  f.add(et_node(6, "Optimizer.step#SGD.step", 2, 13));
  f.add(et_node(1, "[pytorch|profiler|execution_trace|process]", 1, 0));  // root, written last
  f.finish();
  ASSERT_EQ(f.outermost_markers().size(), 2u);
  EXPECT_EQ(f.outermost_markers()[0].rf_id, 10u);
  EXPECT_EQ(f.outermost_markers()[1].rf_id, 13u);
  EXPECT_TRUE(f.has_root());
  EXPECT_EQ(f.nodes(), 6u);
  EXPECT_EQ(f.op_nodes(), 4u);
  EXPECT_EQ(f.op_rf_ids(), (std::vector<std::uint64_t>{10, 11, 12, 13}));
}

TEST(EtFacts, LeavesOutProcessGroupNodesAndCountsMissingAttrs) {
  EtFacts f("Optimizer.step#");
  f.add(et_node(2, "## process_group:init ##", 1, 5));
  f.add(et_node(3, "aten::mm", 2, 6, 0x7f & ~1));
  f.add(et_node(4, "aten::mm", 2, 7, 0x3f));
  f.finish();
  EXPECT_FALSE(f.has_root());
  EXPECT_EQ(f.op_nodes(), 2u);
  EXPECT_EQ(f.nodes_missing_attrs(), 2u);
  EXPECT_EQ(f.missing_attrs_example(), "node 3 (aten::mm) lacks rf_id");
}

TEST(EtFacts, SurvivesACycleInCtrlDeps) {
  EtFacts f("M");
  f.add(et_node(3, "M", 4, 1));
  f.add(et_node(4, "x", 3, 2));
  f.finish();
  EXPECT_TRUE(f.outermost_markers().empty());  // 3's ancestor chain reaches itself
}

TEST(EtFacts, TheWorldSizeIsTheDefaultGroupsSize) {
  EtFacts f("M");
  EtNode pg = et_node(2, "## process_group:init ##", 1, 5);
  pg.process_groups =
      R"([{"pg_name": "1", "pg_desc": "tp", "ranks": [0, 1], "group_size": 2},)"
      R"( {"pg_name": "0", "pg_desc": "default_pg", "ranks": [], "group_size": 8}])";
  f.add(et_node(3, "aten::mm", 2, 6));
  EXPECT_FALSE(f.world_size());
  f.add(pg);
  f.finish();
  EXPECT_EQ(f.world_size(), 8u);
}

TEST(EtFacts, NoWorldSizeFromAnythingButTheDefaultGroup) {
  EXPECT_EQ(world_size_of_process_groups(R"([{"pg_name": "0", "group_size": 3}])"), 3u);
  EXPECT_FALSE(world_size_of_process_groups(R"([{"pg_name": "1", "group_size": 3}])"));
  EXPECT_FALSE(world_size_of_process_groups(R"([{"pg_name": 0, "group_size": 3}])"));
  EXPECT_FALSE(world_size_of_process_groups(R"([{"pg_name": "0", "group_size": 0}])"));
  EXPECT_FALSE(world_size_of_process_groups(R"([{"pg_name": "0", "group_size": -2}])"));
  EXPECT_FALSE(world_size_of_process_groups(R"([{"pg_name": "0"}])"));
  EXPECT_FALSE(world_size_of_process_groups(R"({"pg_name": "0", "group_size": 3})"));
  EXPECT_FALSE(world_size_of_process_groups("[{\"pg_name\""));
  EXPECT_FALSE(world_size_of_process_groups(""));
  EXPECT_FALSE(world_size_of_process_groups(R"([1, "x", null])"));
}

}  // namespace
}  // namespace chakrashim::tools::check
