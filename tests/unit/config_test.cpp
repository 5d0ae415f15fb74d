// Unit tests for parse_config (config/config.h) against the variable table
// (config/config_vars.h) and docs/design.md section 3.
#include "config/config.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <functional>
#include <initializer_list>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "config/config_vars.h"

namespace chakrashim::config {
namespace {

// The smallest environment that enables capture without errors, and `more`.
EnvSnapshot enabled_env(std::initializer_list<std::pair<std::string_view, std::string_view>> more = {}) {
  EnvSnapshot env{{"CHAKRA_PROFILE", "1"}, {"CHAKRA_TRACE_DIR", "/tmp/chakra-traces"}};
  for (const auto& [name, value] : more) env.set(name, value);
  return env;
}

EnvSnapshot with(EnvSnapshot env, std::string_view name, std::string_view value) {
  env.set(name, value);
  return env;
}

const VarSpec& spec_of(std::string_view name) {
  for (const auto& v : kConfigVars)
    if (v.name == name) return v;
  ADD_FAILURE() << "no table entry for " << name;
  return kConfigVars[0];
}

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += "  " + l + "\n";
  return out;
}

bool contains(std::string_view haystack, std::string_view needle) {
  return haystack.find(needle) != std::string_view::npos;
}

// One case per variable: a good value and what it must do to the Config, and
// values that the variable's grammar rejects. Bad values here are printable
// and contain no quote or backslash, so they appear verbatim in the line.
struct VarCase {
  std::string_view name;
  std::string good;
  std::function<void(const Config&)> check;
  std::vector<std::string> bad;
  // Other variables the case needs (CHAKRA_TRIGGER_SIGNAL needs
  // CHAKRA_ON_DEMAND=1), set for the good value and the bad ones alike.
  std::vector<std::pair<std::string, std::string>> needs = {};
};

EnvSnapshot case_env(const VarCase& c, std::string_view value) {
  auto env = enabled_env();
  for (const auto& [name, v] : c.needs) env.set(name, v);
  env.set(c.name, value);
  return env;
}

const std::vector<VarCase>& var_cases() {
  static const std::vector<VarCase> cases = {
      {"CHAKRA_PROFILE", "ON", [](const Config&) {}, {"maybe", "2", "", "y"}},
      {"CHAKRA_START_STEP", "5",
       [](const Config& c) {
         EXPECT_EQ(c.start_step, 5u);
         EXPECT_EQ(c.end_step, 5u);
       },
       {"1e3", "-1", "+1", " 2", "", "18446744073709551616"}},
      {"CHAKRA_END_STEP", "9", [](const Config& c) { EXPECT_EQ(c.end_step, 9u); },
       {"x", "9.5", "-9"}},
      {"CHAKRA_WARMUP_STEPS", "3", [](const Config& c) { EXPECT_EQ(c.warmup_steps, 3u); },
       {"+1", "one", ""}, {{"CHAKRA_END_STEP", "9"}}},
      {"CHAKRA_ACTIVE_STEPS", "4", [](const Config& c) { EXPECT_EQ(c.active_steps, 4u); },
       {"a", "-4", "4 "}},
      {"CHAKRA_REPEAT_EVERY", "1000",
       [](const Config& c) { EXPECT_EQ(c.repeat_every, 1000u); }, {"x", "-5", "1e3", ""},
       {{"CHAKRA_START_STEP", "10"}, {"CHAKRA_END_STEP", "12"}}},
      {"CHAKRA_REPEAT_UNTIL", "5000",
       [](const Config& c) { EXPECT_EQ(c.repeat_until, std::optional<std::uint64_t>(5000)); },
       {"never", "-1", ""}, {{"CHAKRA_REPEAT_EVERY", "100"}}},
      {"CHAKRA_ON_DEMAND", "on", [](const Config& c) { EXPECT_TRUE(c.on_demand); },
       {"demand", "2"}},
      {"CHAKRA_TRIGGER_SIGNAL", "sigusr1",
       [](const Config& c) { EXPECT_EQ(c.trigger_signal, SIGUSR1); }, {"TERM", "10", "usr3"},
       {{"CHAKRA_ON_DEMAND", "1"}}},
      {"CHAKRA_TRIGGER_STEPS", "100000",
       [](const Config& c) { EXPECT_EQ(c.trigger_steps, 100000u); }, {"0", "100001", "five", ""},
       {{"CHAKRA_ON_DEMAND", "1"}}},
      {"CHAKRA_TRACE_DIR", "/data/traces",
       [](const Config& c) { EXPECT_EQ(c.trace_dir, "/data/traces"); }, {""}},
      {"CHAKRA_RANKS", "0,4-7",
       [](const Config& c) {
         ASSERT_TRUE(c.ranks);
         EXPECT_TRUE(c.ranks->contains(0));
         EXPECT_FALSE(c.ranks->contains(3));
         EXPECT_TRUE(c.ranks->contains(5));
         EXPECT_FALSE(c.ranks->contains(8));
         EXPECT_EQ(c.ranks_text, std::optional<std::string>("0,4-7"));
       },
       {"1,", "7-4", "all", ""}},
      {"CHAKRA_RANK", "12",
       [](const Config& c) { EXPECT_EQ(c.rank_override, std::optional<std::uint64_t>(12)); },
       {"-1", "r1", ""}},
      {"CHAKRA_JOB_ID", "run_7.b",
       [](const Config& c) {
         EXPECT_EQ(c.job_id_override, std::optional<std::string>("run_7.b"));
       },
       {"a/b", "..", "a b", ""}},
      {"CHAKRA_RUN_ID", "chakra-run:node3-41-17",
       [](const Config& c) {
         EXPECT_EQ(c.run_id_override, std::optional<std::string>("chakra-run:node3-41-17"));
       },
       {"a/b", "a b", ""}},
      {"CHAKRA_OVERWRITE", "yes", [](const Config& c) { EXPECT_TRUE(c.overwrite); },
       {"2", "overwrite"}},
      {"CHAKRA_HOST_TRACE", "off", [](const Config& c) { EXPECT_FALSE(c.host_trace); },
       {"y", "disabled"}},
      {"CHAKRA_ET_RECORDER", "Torch", [](const Config& c) { EXPECT_FALSE(c.et_native); },
       {"", "both", "1", "torch,native"}},
      {"CHAKRA_DEVICE_TRACE", "FALSE", [](const Config& c) { EXPECT_FALSE(c.device_trace); },
       {"enable", "10"}},
      {"CHAKRA_MODULE_SCOPES", "yes", [](const Config& c) { EXPECT_TRUE(c.module_scopes); },
       {"modules", "2", ""}},
      {"CHAKRA_STEP_MARKER", "MyStep#",
       [](const Config& c) { EXPECT_EQ(c.step_marker, "MyStep#"); }, {""}},
      {"CHAKRA_LOG_LEVEL", "DEBUG",
       [](const Config& c) { EXPECT_EQ(c.log_level, LogLevel::debug); },
       {"verbose", "3", "trace"}},
      {"CHAKRA_PROCESS_FILTER", "^python[0-9.]*$",
       [](const Config& c) {
         EXPECT_EQ(c.process_filter, std::optional<std::string>("^python[0-9.]*$"));
       },
       {"(", "[a", ""}},
      {"CHAKRA_GZIP", "true", [](const Config& c) { EXPECT_TRUE(c.gzip); }, {"gz", "tru"}},
      {"CHAKRA_MAX_MEMORY", "512M",
       [](const Config& c) { EXPECT_EQ(c.max_memory, 512ULL << 20); },
       {"1GB", "G", "1.5G", "17179869184G"}},
      {"CHAKRA_EXIT_TIMEOUT", "3600",
       [](const Config& c) { EXPECT_EQ(c.exit_timeout_s, 3600u); }, {"3601", "10s", "-1"}},
      {"CHAKRA_FLUSH_SIGNAL", "USR2",
       [](const Config& c) { EXPECT_EQ(c.flush_signal, SIGUSR2); }, {"TERM", "12", "usr3"}},
      {"CHAKRA_CUPTI_LIB", "/opt/cuda/lib64/libcupti.so",
       [](const Config& c) {
         EXPECT_EQ(c.cupti_lib, std::optional<std::string>("/opt/cuda/lib64/libcupti.so"));
       },
       {""}},
      {"CHAKRA_CUPTI_BUFFERS", "128K",
       [](const Config& c) { EXPECT_EQ(c.cupti_buffers, 128ULL << 10); },
       {"127K", "64", "", "1.5M"}},
      {"CHAKRA_CUPTI_EXTRA", "Overhead,sync",
       [](const Config& c) {
         EXPECT_TRUE(c.cupti_sync);
         EXPECT_TRUE(c.cupti_overhead);
       },
       {"", "sync,", "sync,sync", "kernel", "none,sync", ",overhead"}},
  };
  return cases;
}

// ---- the table ---------------------------------------------------------------

TEST(ConfigVarsTable, NamesStartWithChakraAndAreUnique) {
  std::set<std::string_view> seen;
  for (const auto& v : kConfigVars) {
    EXPECT_EQ(v.name.substr(0, 7), "CHAKRA_") << v.name;
    EXPECT_GT(v.name.size(), 7u) << v.name;
    EXPECT_TRUE(seen.insert(v.name).second) << "duplicate " << v.name;
    EXPECT_FALSE(v.grammar.empty()) << v.name;
    EXPECT_FALSE(v.fallback.empty()) << v.name;
    EXPECT_FALSE(v.doc.empty()) << v.name;
  }
}

TEST(ConfigVarsTable, EveryVariableHasATestCaseHere) {
  std::set<std::string_view> covered;
  for (const auto& c : var_cases()) {
    covered.insert(c.name);
    EXPECT_TRUE(std::any_of(kConfigVars.begin(), kConfigVars.end(),
                            [&](const VarSpec& v) { return v.name == c.name; }))
        << c.name << " is tested but not in kConfigVars";
  }
  for (const auto& v : kConfigVars) EXPECT_TRUE(covered.count(v.name)) << v.name << " untested";
}

// ---- every variable: a good value and bad values ------------------------------

// The two variables of others that change the capture are read from the
// snapshot taken at load, like ours: the bridge never calls getenv at arm,
// when another thread of the job may be calling setenv.
TEST(ParseConfig, ReadsCudaHomeAndTorchsTensorDataVariablesFromTheSnapshot) {
  const auto plain = parse_config(enabled_env());
  ASSERT_TRUE(plain.config);
  EXPECT_FALSE(plain.config->cuda_home);
  EXPECT_FALSE(plain.config->et_integral_tensors);

  const auto both = parse_config(enabled_env({{"CUDA_HOME", "/opt/cuda"}, {"CUDA_PATH", "/usr/local/cuda"}}));
  ASSERT_TRUE(both.config);
  EXPECT_EQ(both.config->cuda_home.value_or(""), "/opt/cuda");
  const auto path = parse_config(enabled_env({{"CUDA_HOME", ""}, {"CUDA_PATH", "/usr/local/cuda"}}));
  ASSERT_TRUE(path.config);
  EXPECT_EQ(path.config->cuda_home.value_or(""), "/usr/local/cuda");

  for (const char* name : {"ENABLE_PYTORCH_EXECUTION_TRACE_SAVE_INTEGRAL_TENSOR_RANGE",
                           "ENABLE_PYTORCH_EXECUTION_TRACE_SAVE_INTEGRAL_TENSOR_DATA"}) {
    const auto r = parse_config(enabled_env({{name, "1"}}));
    ASSERT_TRUE(r.config) << name;
    EXPECT_TRUE(r.config->et_integral_tensors) << name;
    EXPECT_TRUE(r.warnings.empty()) << name;
  }
  // And the snapshot keeps them: the stub copies them at load.
  const char* entries[] = {"CUDA_HOME=/opt/cuda", "CUDA_PATH=/x",
                           "ENABLE_PYTORCH_EXECUTION_TRACE_SAVE_INTEGRAL_TENSOR_RANGE=1", "HOME=/root"};
  const auto env = EnvSnapshot::from_entries(entries, 4);
  EXPECT_EQ(env.get("CUDA_HOME").value_or(""), "/opt/cuda");
  EXPECT_EQ(env.get("CUDA_PATH").value_or(""), "/x");
  EXPECT_TRUE(env.get("ENABLE_PYTORCH_EXECUTION_TRACE_SAVE_INTEGRAL_TENSOR_RANGE"));
  EXPECT_FALSE(env.get("HOME"));
}

TEST(ParseConfig, StartStepZeroIsAcceptedWithAWarning) {
  const auto r = parse_config(with(enabled_env(), "CHAKRA_START_STEP", "0"));
  EXPECT_TRUE(r.errors.empty()) << joined(r.errors);
  ASSERT_TRUE(r.config);
  EXPECT_EQ(r.config->start_step, 0u);
  EXPECT_TRUE(contains(joined(r.warnings), "CHAKRA_START_STEP=0 captures step 0")) << joined(r.warnings);
  EXPECT_TRUE(parse_config(with(enabled_env(), "CHAKRA_START_STEP", "1")).warnings.empty());
}

TEST(ParseConfig, AcceptsAGoodValueForEveryVariable) {
  for (const auto& c : var_cases()) {
    SCOPED_TRACE(std::string(c.name) + "=" + c.good);
    const auto r = parse_config(case_env(c, c.good));
    EXPECT_TRUE(r.enabled);
    EXPECT_TRUE(r.errors.empty()) << joined(r.errors);
    EXPECT_TRUE(r.warnings.empty()) << joined(r.warnings);
    ASSERT_TRUE(r.config);
    c.check(*r.config);
  }
}

TEST(ParseConfig, GivesOneLineWithNameValueAndGrammarForEveryBadValue) {
  for (const auto& c : var_cases()) {
    const std::string_view grammar = spec_of(c.name).grammar;
    for (const auto& bad : c.bad) {
      SCOPED_TRACE(std::string(c.name) + "='" + bad + "'");
      const auto r = parse_config(case_env(c, bad));
      EXPECT_TRUE(r.enabled);
      EXPECT_FALSE(r.config) << "a bad value must leave the shim inert";
      ASSERT_EQ(r.errors.size(), 1u) << joined(r.errors);
      const std::string& line = r.errors[0];
      EXPECT_TRUE(contains(line, c.name)) << line;
      EXPECT_TRUE(contains(line, "'" + bad + "'")) << line;
      EXPECT_TRUE(contains(line, grammar)) << line << "\n  grammar: " << grammar;
      EXPECT_EQ(line.find('\n'), std::string::npos) << line;
    }
  }
}

TEST(ParseConfig, GivesOneLinePerBadVariable) {
  const auto r =
      parse_config(enabled_env({{"CHAKRA_START_STEP", "x"}, {"CHAKRA_GZIP", "maybe"}, {"CHAKRA_MAX_MEMORY", "1GB"}}));
  EXPECT_FALSE(r.config);
  ASSERT_EQ(r.errors.size(), 3u) << joined(r.errors);
  EXPECT_TRUE(contains(joined(r.errors), "CHAKRA_START_STEP='x'"));
  EXPECT_TRUE(contains(joined(r.errors), "CHAKRA_GZIP='maybe'"));
  EXPECT_TRUE(contains(joined(r.errors), "CHAKRA_MAX_MEMORY='1GB'"));
}

// ---- windows after the first (docs/on-demand.md) -------------------------------

// The one error line of `env`, which must name `var` and say `why`.
void expect_one_error(const EnvSnapshot& env, std::string_view var, std::string_view why) {
  const auto r = parse_config(env);
  EXPECT_FALSE(r.config);
  ASSERT_EQ(r.errors.size(), 1u) << joined(r.errors);
  EXPECT_TRUE(contains(r.errors[0], std::string(var) + "=")) << r.errors[0];
  EXPECT_TRUE(contains(r.errors[0], why)) << r.errors[0];
}

TEST(ParseConfig, RepeatedWindowsNeedAStepBetweenThem) {
  auto env = enabled_env({{"CHAKRA_START_STEP", "10"}, {"CHAKRA_END_STEP", "14"}, {"CHAKRA_REPEAT_EVERY", "5"}});
  expect_one_error(env, "CHAKRA_REPEAT_EVERY", "expected more than the window's 5 steps");
  env.set("CHAKRA_REPEAT_EVERY", "6");
  EXPECT_TRUE(parse_config(env).config);
  // The default window, step 2 alone: every 2 steps is the closest.
  auto one = enabled_env();
  one.set("CHAKRA_REPEAT_EVERY", "1");
  expect_one_error(one, "CHAKRA_REPEAT_EVERY", "windows need a step between them");
  one.set("CHAKRA_REPEAT_EVERY", "2");
  EXPECT_TRUE(parse_config(one).config);
}

TEST(ParseConfig, RepeatUntilNeedsRepeatEveryAndComesAfterTheFirstWindow) {
  expect_one_error(with(enabled_env(), "CHAKRA_REPEAT_UNTIL", "50"), "CHAKRA_REPEAT_UNTIL",
                   "set CHAKRA_REPEAT_EVERY too");
  auto env = enabled_env({{"CHAKRA_START_STEP", "10"}, {"CHAKRA_END_STEP", "12"}, {"CHAKRA_REPEAT_EVERY", "100"},
                          {"CHAKRA_REPEAT_UNTIL", "11"}});
  expect_one_error(env, "CHAKRA_REPEAT_UNTIL", "at or after CHAKRA_END_STEP=12");
  env.set("CHAKRA_REPEAT_UNTIL", "12");
  EXPECT_TRUE(parse_config(env).config);
}

TEST(ParseConfig, OnDemandTakesNoFixedWindow) {
  for (std::string_view var :
       {"CHAKRA_START_STEP", "CHAKRA_END_STEP", "CHAKRA_REPEAT_EVERY", "CHAKRA_REPEAT_UNTIL"}) {
    SCOPED_TRACE(var);
    auto env = with(enabled_env(), "CHAKRA_ON_DEMAND", "1");
    env.set(var, "50");
    const auto r = parse_config(env);
    EXPECT_FALSE(r.config);
    // One line for the variable that has no meaning on demand (and none for
    // the rules between the window variables).
    ASSERT_GE(r.errors.size(), 1u);
    EXPECT_TRUE(contains(joined(r.errors), std::string(var) + "='50' is not accepted: not with "
                                                            "CHAKRA_ON_DEMAND=1"))
        << joined(r.errors);
  }
  // Warm-up steps are welcome: they come before each triggered window's steps.
  auto env = with(enabled_env(), "CHAKRA_ON_DEMAND", "1");
  env.set("CHAKRA_WARMUP_STEPS", "2");
  const auto r = parse_config(env);
  ASSERT_TRUE(r.config) << joined(r.errors);
  EXPECT_EQ(r.config->warmup_steps, 2u);
}

TEST(ParseConfig, TheTriggerSignalNeedsOnDemandAndDiffersFromTheFlushSignal) {
  expect_one_error(with(enabled_env(), "CHAKRA_TRIGGER_SIGNAL", "USR2"), "CHAKRA_TRIGGER_SIGNAL",
                   "set CHAKRA_ON_DEMAND=1 too");
  expect_one_error(with(enabled_env(), "CHAKRA_TRIGGER_STEPS", "3"), "CHAKRA_TRIGGER_STEPS",
                   "set CHAKRA_ON_DEMAND=1 too");
  auto env = with(enabled_env(), "CHAKRA_ON_DEMAND", "1");
  env.set("CHAKRA_TRIGGER_SIGNAL", "USR1");
  env.set("CHAKRA_FLUSH_SIGNAL", "SIGUSR1");
  expect_one_error(env, "CHAKRA_TRIGGER_SIGNAL", "CHAKRA_FLUSH_SIGNAL is the same signal");
  env.set("CHAKRA_FLUSH_SIGNAL", "usr2");
  EXPECT_TRUE(parse_config(env).config);
  // "none" is no signal at all, and needs nothing.
  EXPECT_TRUE(parse_config(with(enabled_env(), "CHAKRA_TRIGGER_SIGNAL", "none")).config);
}

TEST(ParseConfig, WindowModesDefaultToOneFixedWindow) {
  const auto r = parse_config(enabled_env());
  ASSERT_TRUE(r.config);
  EXPECT_EQ(r.config->repeat_every, 0u);
  EXPECT_FALSE(r.config->repeat_until);
  EXPECT_FALSE(r.config->on_demand);
  EXPECT_EQ(r.config->trigger_signal, 0);
  EXPECT_EQ(r.config->trigger_steps, 5u);
}

// ---- CHAKRA_PROFILE ------------------------------------------------------------

// Capture off, and not a line said, whatever the other variables hold.
void expect_inert_and_silent(const EnvSnapshot& env) {
  const auto r = parse_config(env);
  EXPECT_FALSE(r.enabled);
  EXPECT_FALSE(r.config);
  EXPECT_TRUE(r.errors.empty()) << joined(r.errors);
  EXPECT_TRUE(r.warnings.empty()) << joined(r.warnings);
}

TEST(ParseConfig, StaysInertAndSilentWhenProfileIsUnset) {
  expect_inert_and_silent({{"CHAKRA_START_STEP", "x"}, {"CHAKRA_MAX_MEMORY", "lots"}, {"CHAKRA_STRAT_STEP", "3"}});
}

TEST(ParseConfig, StaysInertAndSilentWhenProfileIsFalseEvenIfOthersAreBad) {
  for (const char* off : {"0", "false", "off", "no", "FALSE", "Off"}) {
    SCOPED_TRACE(off);
    expect_inert_and_silent({{"CHAKRA_PROFILE", off},
                             {"CHAKRA_START_STEP", "x"},
                             {"CHAKRA_ACTIVE_STEPS", "0"},
                             {"CHAKRA_STRAT_STEP", "3"}});  // and no TRACE_DIR
  }
}

TEST(ParseConfig, EnablesForEveryTrueWord) {
  for (const char* on : {"1", "true", "on", "yes", "TRUE", "Yes"}) {
    SCOPED_TRACE(on);
    const auto r = parse_config(with(enabled_env(), "CHAKRA_PROFILE", on));
    EXPECT_TRUE(r.enabled);
    EXPECT_TRUE(r.errors.empty()) << joined(r.errors);
    EXPECT_TRUE(r.config);
  }
}

TEST(ParseConfig, ReportsAnUnreadableProfileValueOnceAndNothingElse) {
  // Other variables are bad too, and TRACE_DIR is missing: only PROFILE is said.
  const EnvSnapshot env{{"CHAKRA_PROFILE", "maybe"}, {"CHAKRA_START_STEP", "x"}};
  const auto r = parse_config(env);
  EXPECT_TRUE(r.enabled) << "the user meant something: the line must be printed";
  EXPECT_FALSE(r.config);
  ASSERT_EQ(r.errors.size(), 1u) << joined(r.errors);
  EXPECT_TRUE(contains(r.errors[0], "CHAKRA_PROFILE")) << r.errors[0];
  EXPECT_TRUE(contains(r.errors[0], "'maybe'")) << r.errors[0];
  EXPECT_TRUE(contains(r.errors[0], spec_of("CHAKRA_PROFILE").grammar)) << r.errors[0];
}

// ---- required and cross-variable rules ------------------------------------------

TEST(ParseConfig, RequiresTraceDir) {
  const EnvSnapshot env{{"CHAKRA_PROFILE", "1"}};
  const auto r = parse_config(env);
  EXPECT_TRUE(r.enabled);
  EXPECT_FALSE(r.config);
  ASSERT_EQ(r.errors.size(), 1u) << joined(r.errors);
  EXPECT_TRUE(contains(r.errors[0], "CHAKRA_TRACE_DIR")) << r.errors[0];
  EXPECT_EQ(r.errors[0].find('\n'), std::string::npos);
}

TEST(ParseConfig, RejectsAnEndStepBeforeTheStartStep) {
  const auto r = parse_config(enabled_env({{"CHAKRA_START_STEP", "5"}, {"CHAKRA_END_STEP", "3"}}));
  EXPECT_FALSE(r.config);
  ASSERT_EQ(r.errors.size(), 1u) << joined(r.errors);
  EXPECT_TRUE(contains(r.errors[0], "CHAKRA_END_STEP='3'")) << r.errors[0];
  EXPECT_TRUE(contains(r.errors[0], "CHAKRA_START_STEP=5")) << r.errors[0];
}

TEST(ParseConfig, RejectsAnEndStepBeforeTheDefaultStartStep) {
  const auto r = parse_config(with(enabled_env(), "CHAKRA_END_STEP", "1"));
  EXPECT_FALSE(r.config);
  ASSERT_EQ(r.errors.size(), 1u) << joined(r.errors);
  EXPECT_TRUE(contains(r.errors[0], "CHAKRA_END_STEP='1'")) << r.errors[0];
}

TEST(ParseConfig, AcceptsAnEndStepEqualToTheStartStep) {
  const auto r = parse_config(enabled_env({{"CHAKRA_START_STEP", "4"}, {"CHAKRA_END_STEP", "4"}}));
  ASSERT_TRUE(r.config) << joined(r.errors);
  EXPECT_EQ(r.config->start_step, 4u);
  EXPECT_EQ(r.config->end_step, 4u);
}

TEST(ParseConfig, DoesNotAddAnOrderErrorWhenTheStartStepItselfIsBad) {
  const auto r = parse_config(enabled_env({{"CHAKRA_START_STEP", "x"}, {"CHAKRA_END_STEP", "1"}}));
  ASSERT_EQ(r.errors.size(), 1u) << joined(r.errors);
  EXPECT_TRUE(contains(r.errors[0], "CHAKRA_START_STEP='x'")) << r.errors[0];
}

TEST(ParseConfig, RejectsZeroActiveSteps) {
  for (const char* zero : {"0", "00"}) {
    SCOPED_TRACE(zero);
    const auto r = parse_config(with(enabled_env(), "CHAKRA_ACTIVE_STEPS", zero));
    EXPECT_FALSE(r.config);
    ASSERT_EQ(r.errors.size(), 1u) << joined(r.errors);
    EXPECT_TRUE(contains(r.errors[0], "CHAKRA_ACTIVE_STEPS")) << r.errors[0];
    EXPECT_TRUE(contains(r.errors[0], std::string("'") + zero + "'")) << r.errors[0];
    EXPECT_TRUE(contains(r.errors[0], "at least 1")) << r.errors[0];
  }
}

TEST(ParseConfig, RefusesAWindowOfWarmupStepsOnlyNamingTheVariables) {
  // Steps 2 and 3 with two warm-up steps keep nothing (issue #34 item 7):
  // refused at start, not blamed on the memory cap at the window's end.
  auto env = with(enabled_env(), "CHAKRA_START_STEP", "2");
  env.set("CHAKRA_END_STEP", "3");
  env.set("CHAKRA_WARMUP_STEPS", "2");
  expect_one_error(env, "CHAKRA_WARMUP_STEPS", "fewer than the window's 2 steps");
  const auto r = parse_config(env);
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_TRUE(contains(r.errors[0], "CHAKRA_START_STEP=2")) << r.errors[0];
  EXPECT_TRUE(contains(r.errors[0], "CHAKRA_END_STEP=3")) << r.errors[0];
  // One step left to keep is a window.
  env.set("CHAKRA_WARMUP_STEPS", "1");
  EXPECT_TRUE(parse_config(env).config);
  // The default window (one step) with any warm-up keeps nothing either.
  expect_one_error(with(enabled_env(), "CHAKRA_WARMUP_STEPS", "1"), "CHAKRA_WARMUP_STEPS",
                   "lower CHAKRA_WARMUP_STEPS");
}

TEST(ParseConfig, AcceptsZeroWarmupSteps) {
  const auto r = parse_config(with(enabled_env(), "CHAKRA_WARMUP_STEPS", "0"));
  ASSERT_TRUE(r.config) << joined(r.errors);
  EXPECT_EQ(r.config->warmup_steps, 0u);
}

TEST(ParseConfig, AcceptsTheExitTimeoutBounds) {
  for (const char* ok : {"0", "3600"}) {
    const auto r = parse_config(with(enabled_env(), "CHAKRA_EXIT_TIMEOUT", ok));
    ASSERT_TRUE(r.config) << ok << "\n" << joined(r.errors);
  }
}

// ---- defaults -------------------------------------------------------------------

TEST(ParseConfig, UsesTheDocumentedDefaults) {
  const auto r = parse_config(enabled_env());
  EXPECT_TRUE(r.enabled);
  EXPECT_TRUE(r.errors.empty()) << joined(r.errors);
  EXPECT_TRUE(r.warnings.empty()) << joined(r.warnings);
  ASSERT_TRUE(r.config);
  const Config& c = *r.config;
  EXPECT_EQ(c.start_step, 2u);
  EXPECT_EQ(c.end_step, 2u);
  EXPECT_EQ(c.warmup_steps, 0u);
  EXPECT_EQ(c.active_steps, 1u);
  EXPECT_EQ(c.trace_dir, "/tmp/chakra-traces");
  EXPECT_FALSE(c.ranks);
  EXPECT_FALSE(c.ranks_text);
  EXPECT_FALSE(c.rank_override);
  EXPECT_FALSE(c.job_id_override);
  EXPECT_FALSE(c.overwrite);
  EXPECT_TRUE(c.host_trace);
  EXPECT_TRUE(c.et_native);
  EXPECT_TRUE(c.device_trace);
  EXPECT_FALSE(c.module_scopes);
  EXPECT_EQ(c.step_marker, "Optimizer.step#");
  EXPECT_EQ(c.log_level, LogLevel::info);
  EXPECT_FALSE(c.process_filter);
  EXPECT_FALSE(c.gzip);
  EXPECT_EQ(c.max_memory, 1ULL << 30);
  EXPECT_EQ(c.exit_timeout_s, 20u);
  EXPECT_EQ(c.flush_signal, 0);
  EXPECT_FALSE(c.cupti_lib);
}

TEST(ParseConfig, DefaultsTheEndStepToTheGivenStartStep) {
  for (const char* start : {"0", "7", "1000"}) {
    SCOPED_TRACE(start);
    const auto r = parse_config(with(enabled_env(), "CHAKRA_START_STEP", start));
    ASSERT_TRUE(r.config) << joined(r.errors);
    EXPECT_EQ(r.config->start_step, std::stoull(start));
    EXPECT_EQ(r.config->end_step, std::stoull(start));
  }
}

TEST(ParseConfig, ReadsEveryLogLevelAndSignalWord) {
  const std::pair<const char*, LogLevel> levels[] = {{"error", LogLevel::error},
                                                     {"warn", LogLevel::warn},
                                                     {"Info", LogLevel::info},
                                                     {"debug", LogLevel::debug}};
  for (const auto& [word, level] : levels) {
    const auto r = parse_config(with(enabled_env(), "CHAKRA_LOG_LEVEL", word));
    ASSERT_TRUE(r.config) << word;
    EXPECT_EQ(r.config->log_level, level) << word;
  }
  const std::pair<const char*, int> signals[] = {
      {"none", 0}, {"USR1", SIGUSR1}, {"usr2", SIGUSR2}, {"SIGUSR1", SIGUSR1}};
  for (const auto& [word, sig] : signals) {
    const auto r = parse_config(with(enabled_env(), "CHAKRA_FLUSH_SIGNAL", word));
    ASSERT_TRUE(r.config) << word;
    EXPECT_EQ(r.config->flush_signal, sig) << word;
  }
}

// ---- unknown names ------------------------------------------------------------------

TEST(ParseConfig, WarnsAboutAMisspelledNameAndSuggestsTheRealOne) {
  const auto r = parse_config(with(enabled_env(), "CHAKRA_STRAT_STEP", "3"));
  EXPECT_TRUE(r.enabled);
  EXPECT_TRUE(r.errors.empty()) << joined(r.errors);
  ASSERT_TRUE(r.config) << "an unknown name must not disable capture";
  EXPECT_EQ(r.config->start_step, 2u) << "the misspelled variable must be ignored";
  ASSERT_EQ(r.warnings.size(), 1u) << joined(r.warnings);
  EXPECT_TRUE(contains(r.warnings[0], "CHAKRA_STRAT_STEP")) << r.warnings[0];
  EXPECT_TRUE(contains(r.warnings[0], "CHAKRA_START_STEP")) << r.warnings[0];
}

TEST(ParseConfig, WarnsAboutAFarOffNameWithoutASuggestion) {
  const auto r = parse_config(with(enabled_env(), "CHAKRA_SOMETHING_ELSE", "1"));
  ASSERT_TRUE(r.config);
  ASSERT_EQ(r.warnings.size(), 1u) << joined(r.warnings);
  EXPECT_TRUE(contains(r.warnings[0], "CHAKRA_SOMETHING_ELSE")) << r.warnings[0];
  EXPECT_FALSE(contains(r.warnings[0], "did you mean")) << r.warnings[0];
}

TEST(ParseConfig, IgnoresLauncherVariablesWhenWarning) {
  const auto r = parse_config(enabled_env({{"RANK", "3"}, {"SLURM_PROCID", "1"}}));
  EXPECT_TRUE(r.warnings.empty()) << joined(r.warnings);
  EXPECT_TRUE(r.config);
}

// ---- how values are quoted ---------------------------------------------------------------

bool has_control_char(std::string_view line) {
  for (unsigned char c : line)
    if (c < 0x20 || c == 0x7f) return true;
  return false;
}

TEST(ParseConfig, EscapesControlCharactersInTheErrorLine) {
  const std::string value = "1\n2\r3\t4\x1b[31m\x7f";
  const auto r = parse_config(with(enabled_env(), "CHAKRA_START_STEP", value));
  ASSERT_EQ(r.errors.size(), 1u) << joined(r.errors);
  const std::string& line = r.errors[0];
  EXPECT_FALSE(has_control_char(line)) << line;
  EXPECT_TRUE(contains(line, "CHAKRA_START_STEP")) << line;
  EXPECT_TRUE(contains(line, "'1\\x0a2\\x0d3\\x094\\x1b[31m\\x7f'")) << line;
}

TEST(ParseConfig, EscapesQuotesBackslashesAndNonAsciiInTheErrorLine) {
  const auto r = parse_config(with(enabled_env(), "CHAKRA_GZIP", "a'b\\c\xc3\xa9"));
  ASSERT_EQ(r.errors.size(), 1u) << joined(r.errors);
  EXPECT_TRUE(contains(r.errors[0], "'a\\x27b\\x5cc\\xc3\\xa9'")) << r.errors[0];
}

TEST(ParseConfig, CutsVeryLongValuesInTheErrorLine) {
  const std::string value(500, 'x');
  const auto r = parse_config(with(enabled_env(), "CHAKRA_RANKS", value));
  ASSERT_EQ(r.errors.size(), 1u) << joined(r.errors);
  EXPECT_TRUE(contains(r.errors[0], "'" + std::string(80, 'x') + "...'")) << r.errors[0];
  EXPECT_FALSE(contains(r.errors[0], std::string(81, 'x'))) << r.errors[0];
}

TEST(ParseConfig, EscapesControlCharactersInAnUnreadableProfileValue) {
  const EnvSnapshot env{{"CHAKRA_PROFILE", "1\n"}};
  const auto r = parse_config(env);
  ASSERT_EQ(r.errors.size(), 1u) << joined(r.errors);
  EXPECT_FALSE(has_control_char(r.errors[0])) << r.errors[0];
  EXPECT_TRUE(contains(r.errors[0], "'1\\x0a'")) << r.errors[0];
}

TEST(EnvSnapshot, FromEntriesKeepsOursAndTheLaunchersOnly) {
  // What the preload stub copied at load: a superset (every CHAKRA* name).
  const char* entries[] = {"CHAKRA_PROFILE=1", "PATH=/usr/bin", "RANK=3",
                           "CHAKRASHIM_CONFIG_SHOWN=1", "CHAKRASHIM_OTHER=x",
                           "CHAKRA_TRACE_DIR=a=b", "NOEQUALS", "SLURM_PROCID=7",
                           "RANKS=9", nullptr};
  const EnvSnapshot env = EnvSnapshot::from_entries(entries, 9);
  EXPECT_EQ(env.get("CHAKRA_PROFILE"), "1");
  EXPECT_EQ(env.get("RANK"), "3");
  EXPECT_EQ(env.get("SLURM_PROCID"), "7");
  EXPECT_EQ(env.get("CHAKRASHIM_CONFIG_SHOWN"), "1");
  EXPECT_EQ(env.get("CHAKRA_TRACE_DIR"), "a=b");  // the first '=' ends the name
  EXPECT_FALSE(env.get("PATH"));
  EXPECT_FALSE(env.get("CHAKRASHIM_OTHER"));
  EXPECT_FALSE(env.get("RANKS"));
  EXPECT_FALSE(env.get("NOEQUALS"));
  EXPECT_EQ(env.all().size(), 5u);
  EXPECT_TRUE(EnvSnapshot::from_entries(nullptr, 3).all().empty());
}

TEST(EnvSnapshot, FromEntriesKeepsTheFirstOfARepeatedNameAsGetenvDoes) {
  // An environment built by hand for execve may repeat a name; getenv and
  // Python's os.environ read the first, and so must we.
  const char* entries[] = {"CHAKRA_TRACE_DIR=first", "CHAKRA_PROFILE=1", "CHAKRA_TRACE_DIR=second",
                           "RANK=2", "RANK=5"};
  const EnvSnapshot env = EnvSnapshot::from_entries(entries, 5);
  EXPECT_EQ(env.get("CHAKRA_TRACE_DIR"), "first");
  EXPECT_EQ(env.get("RANK"), "2");
  EXPECT_EQ(env.all().size(), 3u);
}

}  // namespace
}  // namespace chakrashim::config
