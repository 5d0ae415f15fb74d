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

TEST(PairIdentity, EachFileSaysWhoseItIs) {
  PairIdentity p;
  EtSummary et;
  et.pid = 100;
  note_et(p, "/t/0_chakra/rank-3.json", et);
  EXPECT_EQ(p.et_pid, 100u);
  EXPECT_EQ(p.et_rank, 3u);
  TraceEvent kernel, op;
  kernel.cat = "kernel";
  kernel.pid = 0;  // a GPU's "pid"
  op.cat = "cpu_op";
  op.pid = 200;
  note_device_event(p, kernel);
  EXPECT_FALSE(p.device_pid);
  note_device_event(p, op);
  op.pid = 300;  // only the first host op counts
  note_device_event(p, op);
  EXPECT_EQ(p.device_pid, 200);
  TraceSummary device;
  device.distributed_info = nlohmann::json::parse(R"({"rank": 4})");
  note_device(p, device);
  EXPECT_EQ(p.device_rank, 4u);
  EXPECT_FALSE(p.device_from_chakrashim);  // so the pids are not compared
  device.chakrashim = nlohmann::json::object();
  note_device(p, device);
  EXPECT_EQ(not_one_pair("a/rank-3.json", "b.json", p),
            "a/rank-3.json and b.json are not one rank's pair: the ET was written by pid 100, the device trace by "
            "pid 200; the ET is rank 3's by its name, the device trace says rank 4");
  EXPECT_EQ(not_one_pair("a", "b", PairIdentity{}), "");
}

}  // namespace
}  // namespace chakrashim::tools
