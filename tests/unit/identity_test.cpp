// Unit tests for resolve_identity (common/config/identity.h) against docs/design.md
// section 4.1: rank precedence, world size by family, job id.
#include "config/identity.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "config/config.h"
#include "config/env_snapshot.h"

namespace chakrashim::target {
namespace {

using config::Config;
using config::EnvSnapshot;

// The Config that parse_config makes from the same environment, so that
// CHAKRA_RANK and CHAKRA_JOB_ID arrive the way they do in the shim.
Config config_from(EnvSnapshot env) {
  env.set("CHAKRA_PROFILE", "1");
  env.set("CHAKRA_TRACE_DIR", "/tmp/chakra-traces");
  const auto r = config::parse_config(env);
  EXPECT_TRUE(r.errors.empty()) << (r.errors.empty() ? "" : r.errors[0]);
  return r.config.value_or(Config{});
}

Identity resolve(const EnvSnapshot& env) { return resolve_identity(env, config_from(env)); }

// Rank variables in precedence order, each with a distinct rank value.
const std::vector<std::pair<std::string, std::uint64_t>> kRankVarsInOrder = {
    {"CHAKRA_RANK", 11},  {"RANK", 12},     {"OMPI_COMM_WORLD_RANK", 13},
    {"PMIX_RANK", 14},    {"PMI_RANK", 15}, {"MV2_COMM_WORLD_RANK", 16},
    {"SLURM_PROCID", 17},
};

TEST(ResolveIdentity, TakesTheFirstSetRankVariableInPrecedenceOrder) {
  // With variables i..end set, variable i wins.
  for (std::size_t first = 0; first < kRankVarsInOrder.size(); ++first) {
    EnvSnapshot env;
    for (std::size_t i = first; i < kRankVarsInOrder.size(); ++i)
      env.set(kRankVarsInOrder[i].first, std::to_string(kRankVarsInOrder[i].second));
    SCOPED_TRACE("first set: " + kRankVarsInOrder[first].first);
    const Identity id = resolve(env);
    EXPECT_EQ(id.rank, kRankVarsInOrder[first].second);
    EXPECT_EQ(id.rank_source, kRankVarsInOrder[first].first);
    EXPECT_TRUE(id.notes.empty());
  }
}

TEST(ResolveIdentity, FindsEachRankVariableWhenItIsTheOnlyOneSet) {
  for (const auto& [name, value] : kRankVarsInOrder) {
    SCOPED_TRACE(name);
    EnvSnapshot env;
    env.set(name, std::to_string(value));
    const Identity id = resolve(env);
    EXPECT_EQ(id.rank, value);
    EXPECT_EQ(id.rank_source, name);
  }
}

TEST(ResolveIdentity, IgnoresTheOrderInWhichVariablesWereSet) {
  EnvSnapshot env;
  for (auto it = kRankVarsInOrder.rbegin(); it != kRankVarsInOrder.rend(); ++it)
    if (it->first != "CHAKRA_RANK") env.set(it->first, std::to_string(it->second));
  const Identity id = resolve(env);
  EXPECT_EQ(id.rank, 12u);
  EXPECT_EQ(id.rank_source, "RANK");
}

TEST(ResolveIdentity, DefaultsToRankZeroWhenNoLauncherVariableIsSet) {
  const Identity id = resolve(EnvSnapshot{});
  EXPECT_EQ(id.rank, 0u);
  EXPECT_EQ(id.rank_source, "default");
  EXPECT_FALSE(id.world_size);
  EXPECT_EQ(id.job_id, "0");
  EXPECT_EQ(id.restart_count, 0u);
  EXPECT_TRUE(id.notes.empty());
}

TEST(ResolveIdentity, LetsTorchrunWinOverAnEnclosingSrun) {
  const EnvSnapshot env{
      {"SLURM_PROCID", "1"}, {"SLURM_NTASKS", "2"}, {"RANK", "5"}, {"WORLD_SIZE", "8"}};
  const Identity id = resolve(env);
  EXPECT_EQ(id.rank, 5u);
  EXPECT_EQ(id.world_size, std::optional<std::uint64_t>(8));
  EXPECT_EQ(id.rank_source, "RANK");
}

TEST(ResolveIdentity, TakesWorldSizeFromTheRanksOwnFamily) {
  struct Case {
    const char* rank_var;
    const char* size_var;
  };
  const Case cases[] = {{"RANK", "WORLD_SIZE"},
                        {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
                        {"PMIX_RANK", "SLURM_NTASKS"},  // PMIx has no size variable
                        {"PMI_RANK", "PMI_SIZE"},
                        {"MV2_COMM_WORLD_RANK", "MV2_COMM_WORLD_SIZE"},
                        {"SLURM_PROCID", "SLURM_NTASKS"}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.rank_var);
    EnvSnapshot env;
    env.set(c.rank_var, "1");
    env.set(c.size_var, "4");
    const Identity id = resolve(env);
    EXPECT_EQ(id.rank_source, c.rank_var);
    EXPECT_EQ(id.world_size, std::optional<std::uint64_t>(4));
  }
}

TEST(ResolveIdentity, LeavesWorldSizeEmptyWhenTheRanksFamilyHasNone) {
  const EnvSnapshot env{{"RANK", "3"}, {"SLURM_NTASKS", "2"}, {"OMPI_COMM_WORLD_SIZE", "16"}};
  const Identity id = resolve(env);
  EXPECT_EQ(id.rank, 3u);
  EXPECT_EQ(id.rank_source, "RANK");
  EXPECT_FALSE(id.world_size);
}

TEST(ResolveIdentity, LeavesWorldSizeEmptyWithoutARankVariable) {
  const EnvSnapshot env{{"WORLD_SIZE", "8"}, {"SLURM_NTASKS", "2"}};
  const Identity id = resolve(env);
  EXPECT_EQ(id.rank_source, "default");
  EXPECT_FALSE(id.world_size);
}

TEST(ResolveIdentity, SkipsAnUnreadableRankWithANoteAndUsesTheNextFamily) {
  const EnvSnapshot env{{"RANK", "abc"},
                        {"WORLD_SIZE", "8"},
                        {"OMPI_COMM_WORLD_RANK", "2"},
                        {"OMPI_COMM_WORLD_SIZE", "4"}};
  const Identity id = resolve(env);
  EXPECT_EQ(id.rank, 2u);
  EXPECT_EQ(id.rank_source, "OMPI_COMM_WORLD_RANK");
  EXPECT_EQ(id.world_size, std::optional<std::uint64_t>(4)) << "not RANK's WORLD_SIZE";
  ASSERT_EQ(id.notes.size(), 1u);
  EXPECT_NE(id.notes[0].find("RANK='abc'"), std::string::npos) << id.notes[0];
}

TEST(ResolveIdentity, FallsBackToZeroWhenEveryRankIsUnreadable) {
  const EnvSnapshot env{{"RANK", "-1"}, {"SLURM_PROCID", " 1"}};
  const Identity id = resolve(env);
  EXPECT_EQ(id.rank, 0u);
  EXPECT_EQ(id.rank_source, "default");
  EXPECT_EQ(id.notes.size(), 2u);
}

TEST(ResolveIdentity, NotesAnUnreadableWorldSizeAndLeavesItEmpty) {
  const EnvSnapshot env{{"RANK", "1"}, {"WORLD_SIZE", "eight"}};
  const Identity id = resolve(env);
  EXPECT_EQ(id.rank, 1u);
  EXPECT_FALSE(id.world_size);
  ASSERT_EQ(id.notes.size(), 1u);
  EXPECT_NE(id.notes[0].find("WORLD_SIZE='eight'"), std::string::npos) << id.notes[0];
}

TEST(ResolveIdentity, LetsChakraRankOverrideTheRankButKeepTheFamilyWorldSize) {
  const EnvSnapshot env{{"CHAKRA_RANK", "7"}, {"RANK", "3"}, {"WORLD_SIZE", "8"}};
  const Identity id = resolve(env);
  EXPECT_EQ(id.rank, 7u);
  EXPECT_EQ(id.rank_source, "CHAKRA_RANK");
  EXPECT_EQ(id.world_size, std::optional<std::uint64_t>(8));
}

TEST(ResolveIdentity, LetsChakraRankOverrideWithNoLauncherVariables) {
  const Identity id = resolve(EnvSnapshot{{"CHAKRA_RANK", "0"}});
  EXPECT_EQ(id.rank, 0u);
  EXPECT_EQ(id.rank_source, "CHAKRA_RANK");
  EXPECT_FALSE(id.world_size);
}

TEST(ResolveIdentity, TakesTheJobIdFromChakraJobIdFirst) {
  const EnvSnapshot env{{"CHAKRA_JOB_ID", "myrun"}, {"SLURM_JOB_ID", "4242"}};
  EXPECT_EQ(resolve(env).job_id, "myrun");
}

TEST(ResolveIdentity, TakesTheJobIdFromSlurmJobIdSecond) {
  const EnvSnapshot env{{"SLURM_JOB_ID", "4242"}};
  EXPECT_EQ(resolve(env).job_id, "4242");
}

TEST(ResolveIdentity, UsesJobIdZeroWithoutEither) {
  EXPECT_EQ(resolve(EnvSnapshot{{"RANK", "1"}}).job_id, "0");
}

TEST(ResolveIdentity, UsesJobIdZeroWithANoteWhenSlurmJobIdCannotNameAFolder) {
  const Identity id = resolve(EnvSnapshot{{"SLURM_JOB_ID", "../x"}});
  EXPECT_EQ(id.job_id, "0");
  ASSERT_EQ(id.notes.size(), 1u);
  EXPECT_NE(id.notes[0].find("SLURM_JOB_ID"), std::string::npos) << id.notes[0];
}

TEST(ResolveIdentity, ReadsTheTorchelasticRestartCount) {
  EXPECT_EQ(resolve(EnvSnapshot{{"TORCHELASTIC_RESTART_COUNT", "3"}}).restart_count, 3u);
  EXPECT_EQ(resolve(EnvSnapshot{}).restart_count, 0u);
}

TEST(ResolveIdentity, NotesAnUnreadableRestartCountAndUsesZero) {
  const Identity id = resolve(EnvSnapshot{{"TORCHELASTIC_RESTART_COUNT", "x"}});
  EXPECT_EQ(id.restart_count, 0u);
  ASSERT_EQ(id.notes.size(), 1u);
  EXPECT_NE(id.notes[0].find("TORCHELASTIC_RESTART_COUNT"), std::string::npos) << id.notes[0];
}

// Issue #38: with CHAKRA_RANKS=1, rank 0 captures nothing, so rank 1 must
// print the capture line.
TEST(SpeakingRank, IsRankZeroWithoutARankFilter) { EXPECT_EQ(speaking_rank(Config{}), 0u); }

TEST(SpeakingRank, IsTheLowestRankTheFilterLetsThrough) {
  for (const auto& [text, lowest] : std::vector<std::pair<std::string, std::uint64_t>>{{"1", 1}, {"4-7,2", 2}, {"0,3", 0}}) {
    Config c;
    c.ranks = config::parse_rank_list(text);
    EXPECT_EQ(speaking_rank(c), lowest) << text;
  }
}

// Issue #49: every rank of one launch names the same run, the next launch
// another; srun's and mpirun's ids beat chakra-run's, which they may start
// once per rank.
TEST(RunId, NamesEachLaunchersPartJoined) {
  EnvSnapshot env;
  EXPECT_EQ(resolve(env).run_id, "");
  env.set("SLURM_JOB_ID", "88");
  EXPECT_EQ(resolve(env).run_id, "slurm:88");
  env.set("TORCHELASTIC_RUN_ID", "abc-1");
  EXPECT_EQ(resolve(env).run_id, "slurm:88,torchrun:abc-1");
  env.set("SLURM_STEP_ID", "3");
  EXPECT_EQ(resolve(env).run_id, "slurm:88.3,torchrun:abc-1");
}

TEST(RunId, TorchrunsDefaultNoneIsNoId) {
  EnvSnapshot env;
  env.set("TORCHELASTIC_RUN_ID", "none");
  EXPECT_EQ(resolve(env).run_id, "");
  env.set("CHAKRA_RUN_ID", "chakra-run:h-12-99");
  EXPECT_EQ(resolve(env).run_id, "chakra-run:h-12-99");
}

TEST(RunId, ChakraRunsIdOnlyWhereNoLauncherStartsEachRank) {
  for (const auto& [var, value, id] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"SLURM_STEP_ID", "0", "slurm:7.0"},
           {"PMIX_NAMESPACE", "prterun-h-1@1", "slurm:7,pmix:prterun-h-1@1"},
           {"OMPI_MCA_ess_base_jobid", "1234", "slurm:7,ompi:1234"}}) {
    EnvSnapshot env;
    env.set("SLURM_JOB_ID", "7");
    env.set("CHAKRA_RUN_ID", "chakra-run:mine");
    EXPECT_EQ(resolve(env).run_id, "slurm:7,chakra-run:mine");
    env.set(var, value);
    EXPECT_EQ(resolve(env).run_id, id) << var;
  }
}

TEST(RunId, ALaunchersValueThatIsNoIdIsDropped) {
  EnvSnapshot env;
  env.set("TORCHELASTIC_RUN_ID", "a b");
  EXPECT_EQ(resolve(env).run_id, "");
  env.set("TORCHELASTIC_RUN_ID", std::string(300, 'x'));
  EXPECT_EQ(resolve(env).run_id, "");
}

}  // namespace
}  // namespace chakrashim::target
