// Point-to-point ops' global ranks (tools/convert/p2p_ranks.h): the peer a
// c10d::send or recv_ records is a rank of its process group; ASTRA-sim
// takes global ranks (issue #50).
#include "convert/p2p_ranks.h"

#include <gtest/gtest.h>

namespace chakrashim::tools::convert {
namespace {

TEST(P2pRanks, TheDefaultGroupAloneNumbersRanksAsTheWorld) {
  std::string why;
  const std::vector<ProcessGroup> world = {{"0", "default_pg", {}, 2}};
  EXPECT_EQ(global_rank_of(world, "", 1, why), 1u);
  EXPECT_EQ(global_rank_of(world, "0", 1, why), 1u);
  // A group of the first ranks in order numbers them as the world too.
  EXPECT_EQ(global_rank_of({{"0", "", {}, 4}, {"1", "", {0, 1}, 2}}, "", 1, why), 1u);
  EXPECT_EQ(global_rank_of({}, "", 3, why), 3u) << "no process_group:init node: one group";
}

TEST(P2pRanks, ANamedGroupMapsItsRanksToGlobalOnes) {
  std::string why;
  const std::vector<ProcessGroup> mesh = {{"0", "default_pg", {}, 4}, {"1", "", {0, 2}, 2}, {"2", "", {1, 3}, 2}};
  EXPECT_EQ(global_rank_of(mesh, "2", 1, why), 3u);
  EXPECT_EQ(global_rank_of(mesh, "1", 1, why), 2u);
  EXPECT_FALSE(global_rank_of(mesh, "2", 2, why));
  EXPECT_EQ(why, "its peer, rank 2 of group 2: ranks 1, 3, is not in that group");
  EXPECT_FALSE(global_rank_of(mesh, "7", 0, why));
  EXPECT_EQ(why, "its process group 7 is not in the ET's process_group:init node");
}

TEST(P2pRanks, NoGroupNamedAmongGroupsOfOtherRanksIsNotGuessed) {
  std::string why;
  const std::vector<ProcessGroup> mesh = {{"0", "default_pg", {}, 4}, {"1", "", {1, 3}, 2}};
  EXPECT_FALSE(global_rank_of(mesh, "", 1, why));
  EXPECT_EQ(why, "the op names no process group and the job has 2 groups of different ranks "
                 "(0: every rank; 1: ranks 1, 3)");
  EXPECT_FALSE(global_rank_of({{"0", "", {}, 2}}, "", -1, why)) << "recv from any source";
}

TEST(P2pRanks, ASendGoesFromItsRankAReceiveToIt) {
  const P2pEnds send = p2p_ends(true, 0, 1), recv = p2p_ends(false, 1, 0);
  EXPECT_EQ(send.src, 0u);
  EXPECT_EQ(send.dst, 1u);
  EXPECT_EQ(recv.src, 0u);
  EXPECT_EQ(recv.dst, 1u);
}

}  // namespace
}  // namespace chakrashim::tools::convert
