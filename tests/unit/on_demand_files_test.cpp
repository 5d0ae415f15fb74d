// Unit tests for the on-demand mode's files (common/files/on_demand_files.h):
// their names, and the step note, trigger and missed note each encoded and
// read back, with what a bad one says.
#include "files/on_demand_files.h"

#include <gtest/gtest.h>

#include <string>

namespace chakrashim::window {
namespace {

TEST(OnDemandFiles, Names) {
  EXPECT_EQ(control_dir("/t", "123"), "/t/.chakrashim/123");
  EXPECT_EQ(control_dir("/t/", "0"), "/t/.chakrashim/0");
  EXPECT_EQ(window_folder_name(1000), "step-1000");
  EXPECT_TRUE(is_trigger_file_name(trigger_file_name(1764633600123456789LL, 42)));
  EXPECT_TRUE(is_trigger_file_name("trigger-1.json"));
  EXPECT_FALSE(is_trigger_file_name("trigger-.json"));
  EXPECT_FALSE(is_trigger_file_name(".trigger-1.json.tmp"));
  EXPECT_FALSE(is_trigger_file_name("step.json"));
  EXPECT_FALSE(is_trigger_file_name("trigger-1.json~"));
}

TEST(OnDemandFiles, StepNoteRoundTrips) {
  StepNote n;
  n.job_id = "77";
  n.rank = 0;
  n.step = 1234;
  n.time_s = 1764633600.5;
  n.steps_per_s = 12.5;
  n.pid = 4242;
  n.host = "node-1";
  n.restart = 2;
  n.world_size = 512;
  n.ranks = "0-3";
  n.warmup = 1;
  n.gzip = true;
  std::string error;
  const auto back = decode_step_note(encode_step_note(n), error);
  ASSERT_TRUE(back) << error;
  EXPECT_EQ(back->job_id, "77");
  EXPECT_EQ(back->step, 1234u);
  EXPECT_DOUBLE_EQ(back->steps_per_s, 12.5);
  EXPECT_EQ(back->world_size, 512);
  EXPECT_EQ(back->ranks, "0-3");
  EXPECT_EQ(back->restart, 2u);
  EXPECT_EQ(back->warmup, 1u);
  EXPECT_TRUE(back->gzip);
  n.ranks.reset();
  n.world_size = -1;
  const auto again = decode_step_note(encode_step_note(n), error);
  ASSERT_TRUE(again) << error;
  EXPECT_FALSE(again->ranks);
  EXPECT_EQ(again->world_size, -1);
}

TEST(OnDemandFiles, TriggerRoundTripsAndBadOnesSayWhy) {
  Trigger t{100, 5, 1, 1764633600.0, "me@host"};
  std::string error;
  const auto back = decode_trigger(encode_trigger(t), error);
  ASSERT_TRUE(back) << error;
  EXPECT_EQ(back->first_step, 100u);
  EXPECT_EQ(back->steps, 5u);
  EXPECT_EQ(back->restart, 1u);
  EXPECT_EQ(back->requested_by, "me@host");

  const auto bad = [&](const std::string& text) {
    error.clear();
    EXPECT_FALSE(decode_trigger(text, error)) << text;
    EXPECT_FALSE(error.empty()) << text;
    return error;
  };
  bad("");
  bad("{\"format\":\"chakrashim-trigger/1\",\"first_step\":1");  // cut short
  bad("[1,2]");
  EXPECT_NE(bad("{\"format\":\"chakrashim-trigger/2\",\"first_step\":1,\"steps\":1,\"restart\":0}")
                .find("format"),
            std::string::npos);
  EXPECT_NE(bad("{\"format\":\"chakrashim-trigger/1\",\"first_step\":-1,\"steps\":1,\"restart\":0}")
                .find("first_step"),
            std::string::npos);
  EXPECT_NE(bad("{\"format\":\"chakrashim-trigger/1\",\"first_step\":1,\"steps\":0,\"restart\":0}")
                .find("steps"),
            std::string::npos);
  bad("{\"format\":\"chakrashim-trigger/1\",\"first_step\":1,\"steps\":1}");
  bad("{\"format\":\"chakrashim-trigger/1\",\"first_step\":\"5\",\"steps\":1,\"restart\":0}");
  bad("{\"format\":\"chakrashim-trigger/1\",\"first_step\":18446744073709551615,\"steps\":1,"
      "\"restart\":0}");
}

TEST(OnDemandFiles, MissedRoundTrips) {
  EXPECT_EQ(missed_file_name(1300, 7), "missed-1300-rank-7.json");
  std::string error;
  const auto back = decode_missed(encode_missed(Missed{1300, 7, "past: at step 1400"}), error);
  ASSERT_TRUE(back) << error;
  EXPECT_EQ(back->first_step, 1300u);
  EXPECT_EQ(back->rank, 7u);
  EXPECT_EQ(back->why, "past: at step 1400");
  EXPECT_FALSE(decode_missed(encode_trigger(Trigger{1, 1, 0, 0, ""}), error));
  EXPECT_FALSE(decode_missed("{\"format\":\"chakrashim-missed/1\",\"rank\":1}", error));
}

TEST(OnDemandFiles, StepNoteRejectsWhatIsNotOne) {
  std::string error;
  EXPECT_FALSE(decode_step_note("{}", error));
  EXPECT_FALSE(decode_step_note(encode_trigger(Trigger{1, 1, 0, 0, ""}), error));
  EXPECT_NE(error.find("format"), std::string::npos);
}

}  // namespace
}  // namespace chakrashim::window
