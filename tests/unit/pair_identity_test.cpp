// Unit tests for tools/common/pair_identity.h: a host ET and a device trace
// that clearly are not one rank's pair.
#include "common/pair_identity.h"

#include <gtest/gtest.h>

namespace chakrashim::tools {
namespace {

TEST(PairIdentity, SameProcessSameRankIsAPair) {
  PairIdentity p{100, 100, 0, 0, 50, 50, true};
  EXPECT_EQ(pair_mismatch(p), "");
}

TEST(PairIdentity, UnknownFactsAreNotCompared) {
  EXPECT_EQ(pair_mismatch(PairIdentity{}), "");
  EXPECT_EQ(pair_mismatch(PairIdentity{100, std::nullopt, 0, std::nullopt, 5, 0}), "");
}

TEST(PairIdentity, AnotherPidRankOrOpSetIsNot) {
  EXPECT_EQ(pair_mismatch(PairIdentity{100, 200, std::nullopt, std::nullopt, 0, 0, true}),
            "the ET was written by pid 100, the device trace by pid 200");
  // Another writer's device trace: its pid may be another namespace's.
  EXPECT_EQ(pair_mismatch(PairIdentity{1, 200, std::nullopt, std::nullopt, 0, 0, false}), "");
  EXPECT_EQ(pair_mismatch(PairIdentity{std::nullopt, std::nullopt, 0, 1, 0, 0}),
            "the ET is rank 0's by its name, the device trace says rank 1");
  EXPECT_EQ(pair_mismatch(PairIdentity{std::nullopt, std::nullopt, std::nullopt, std::nullopt, 40, 10}),
            "only 10 of the ET's 40 rf_ids are in the device trace");
  EXPECT_EQ(pair_mismatch(PairIdentity{std::nullopt, std::nullopt, std::nullopt, std::nullopt, 40, 20}), "");
}

}  // namespace
}  // namespace chakrashim::tools
