// Process groups from the "## process_group:init ##" node's inputs as the
// converter prints them, and ASTRA-sim's communicator-group file.
#include "convert/comm_groups.h"

#include <gtest/gtest.h>

#include "convert/et_encoding.h"

namespace chakrashim::tools::convert {
namespace {

constexpr const char* kTwoGroups =
    R"(['[{"pg_name": "0", "pg_desc": "default_pg", "backend_config": "cpu:gloo", "ranks": [], "group_size": 4, "group_count": 2}, )"
    R"({"pg_name": "1", "pg_desc": "undefined", "backend_config": "cpu:gloo", "ranks": [0, 2], "group_size": 2, "group_count": 2}]'])";

TEST(CommGroups, ReadsTorchsProcessGroupsAsTheConverterPrintsThem) {
  const auto groups = process_groups_of(kTwoGroups);
  ASSERT_TRUE(groups.has_value());
  ASSERT_EQ(groups->size(), 2u);
  EXPECT_EQ((*groups)[0].name, "0");
  EXPECT_EQ((*groups)[0].desc, "default_pg");
  EXPECT_TRUE((*groups)[0].ranks.empty());
  EXPECT_EQ((*groups)[0].size, 4u);
  EXPECT_EQ((*groups)[1].ranks, (std::vector<std::uint64_t>{0, 2}));
}

TEST(CommGroups, TheFileNamesEveryGroupButTheDefault) {
  const auto groups = process_groups_of(kTwoGroups);
  ASSERT_TRUE(groups.has_value());
  EXPECT_EQ(comm_group_json(*groups, 4), "{\"1\":[0,2]}\n");
  std::vector<ProcessGroup> with_all = *groups;
  with_all[1].ranks.clear();  // an empty list is every rank
  with_all.push_back({"tp_group", "", {0, 1}, 2});  // ASTRA-sim reads names with std::stoi
  EXPECT_EQ(comm_group_json(with_all, 4), "{\"1\":[0,1,2,3]}\n");
}

TEST(CommGroups, AnythingElseIsNoGroups) {
  EXPECT_FALSE(process_groups_of("").has_value());
  EXPECT_FALSE(process_groups_of("[]").has_value());
  EXPECT_FALSE(process_groups_of("['not json']").has_value());
  EXPECT_FALSE(process_groups_of("['[]']").has_value());
  EXPECT_FALSE(process_groups_of(R"(['[{"ranks": []}]'])").has_value());
}

TEST(CommGroups, InputsValuesOfAnEncodedTail) {
  NodeEncoder encoder;
  TailFields tail;
  tail.inputs.values = kTwoGroups;
  EXPECT_EQ(inputs_values_of(encoder.tail(tail)), kTwoGroups);
  EXPECT_EQ(inputs_values_of("\xff\xff"), "");
}

}  // namespace
}  // namespace chakrashim::tools::convert
