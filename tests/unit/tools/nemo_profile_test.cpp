// NeMo's chakra_profile section read for chakra-run --nemo-config
// (tools/nemo_profile.h): where it is, what it becomes, and what is refused.
#include "nemo_profile.h"

#include <gtest/gtest.h>

namespace chakrashim::tools {
namespace {

using Assignments = std::vector<std::pair<std::string, std::string>>;

TEST(NemoProfile, UnderModelAsNemosConfigsHaveIt) {
  const auto p = nemo_profile(R"(name: megatron_gpt
trainer:
  max_steps: 100  # a comment
model:
  micro_batch_size: 1
  nsys_profile:
    enabled: false
    start_step: 10
  chakra_profile:
    enabled: true
    warmup_steps: 1
    active_steps: 2
    trace_dir: "/results/chakra"   # where NeMo writes
    start_step: 10
    end_step: 14
  optim:
    name: fused_adam
)");
  ASSERT_EQ(p.error, "");
  EXPECT_EQ(p.where, "model.chakra_profile");
  EXPECT_TRUE(p.enabled);
  EXPECT_EQ(p.assignments, (Assignments{{"CHAKRA_START_STEP", "10"}, {"CHAKRA_END_STEP", "14"},
                                        {"CHAKRA_WARMUP_STEPS", "1"}, {"CHAKRA_ACTIVE_STEPS", "2"},
                                        {"CHAKRA_TRACE_DIR", "/results/chakra"}}));
  EXPECT_NE(p.said.find("start_step 10 -> CHAKRA_START_STEP"), std::string::npos) << p.said;
}

TEST(NemoProfile, AtTheTopDisabledAndWithoutOptionalKeys) {
  const auto p = nemo_profile("chakra_profile:\n  enabled: false\n  start_step: 3\n  end_step: 3\n");
  ASSERT_EQ(p.error, "");
  EXPECT_EQ(p.where, "chakra_profile");
  EXPECT_FALSE(p.enabled);
  EXPECT_EQ(p.assignments, (Assignments{{"CHAKRA_START_STEP", "3"}, {"CHAKRA_END_STEP", "3"}}));
}

TEST(NemoProfile, MissingOrInconsistentIsOneLine) {
  EXPECT_EQ(nemo_profile("model:\n  nsys_profile:\n    start_step: 1\n").error,
            "no chakra_profile section (at the top, or under model:)");
  // A chakra_profile nested elsewhere is not NeMo's.
  EXPECT_NE(nemo_profile("other:\n  chakra_profile:\n    start_step: 1\n    end_step: 2\n").error, "");
  EXPECT_EQ(nemo_profile("chakra_profile:\n  start_step: 5\n  end_step: 2\n").error,
            "chakra_profile: end_step 2 is before start_step 5");
  EXPECT_EQ(nemo_profile("chakra_profile:\n  end_step: 2\n").error,
            "chakra_profile has no start_step: it says which steps to capture");
  EXPECT_EQ(nemo_profile("chakra_profile:\n  start_step: ten\n  end_step: 2\n").error,
            "chakra_profile.start_step is 'ten', not a whole number");
  EXPECT_EQ(nemo_profile("chakra_profile:\n  start_step: 1\n  end_step: 2\n  active_steps: 0\n").error,
            "chakra_profile.active_steps is 0: no step would be kept");
  const auto interp = nemo_profile(
      "model:\n  chakra_profile:\n    start_step: 1\n    end_step: 2\n    trace_dir: ${exp_manager.explicit_log_dir}/chakra\n");
  EXPECT_NE(interp.error.find("model.chakra_profile.trace_dir is an interpolation"), std::string::npos) << interp.error;
}

}  // namespace
}  // namespace chakrashim::tools
