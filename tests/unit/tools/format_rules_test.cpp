// Unit tests for the rule table (tools/check/format_rules.h): it is indexed
// by RuleId, names are unique, and errors and warnings are exactly
// docs/trace-format.md's check table.
#include "check/format_rules.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace chakrashim::tools::check {
namespace {

TEST(FormatRules, EveryEntrySitsAtItsOwnIndexWithAFix) {
  std::set<std::string_view> names;
  for (std::size_t i = 0; i < kRules.size(); ++i) {
    EXPECT_EQ(static_cast<std::size_t>(kRules[i].id), i) << kRules[i].name;
    EXPECT_TRUE(names.insert(kRules[i].name).second) << "duplicate " << kRules[i].name;
    EXPECT_FALSE(kRules[i].fix.empty()) << kRules[i].name;
    EXPECT_FALSE(kRules[i].what.empty()) << kRules[i].name;
    EXPECT_EQ(rule_by_name(kRules[i].name), kRules[i].id);
  }
  EXPECT_EQ(rule_by_name("no.such"), std::nullopt);
}

TEST(FormatRules, WarningsAreExactlyTraceFormatsEight) {
  std::set<std::string_view> warnings;
  for (const auto& r : kRules)
    if (r.severity == Severity::warning) warnings.insert(r.name);
  EXPECT_EQ(warnings, (std::set<std::string_view>{"link.host_only", "et.schema", "ranks.filtered",
                                                  "steps.partial_last", "device.dropped", "device.truncated",
                                                  "et.parent_missing", "steps.merged"}));
}

TEST(FormatRules, TraceFormatsErrorsAreErrors) {
  for (const char* name : {"et.json", "et.finalized", "device.json", "device.profiler_step", "device.rf_id",
                           "gpu.external_id", "gpu.correlation", "device.rank", "span.equal", "steps.match",
                           "files.partial", "ranks.missing", "et.duplicates", "join.op_count", "pair.mismatch",
                           "steps.profiler_step"}) {
    const auto id = rule_by_name(name);
    ASSERT_TRUE(id) << name;
    EXPECT_EQ(rule(*id).severity, Severity::error) << name;
  }
}

TEST(FormatRules, TheHostOnlyFixSaysWhatChakraDoes) {
  EXPECT_EQ(rule(RuleId::link_host_only).fix,
            "Chakra's own linker (chakra_trace_link) will refuse this pair (the HTA parser inside it "
            "fails with KeyError 'cuda_runtime'); use chakrashim link. HTA's own GPU breakdowns need "
            "GPU events (docs/report.md)");
}

}  // namespace
}  // namespace chakrashim::tools::check
