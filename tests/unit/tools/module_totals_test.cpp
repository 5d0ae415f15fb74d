// Unit tests for the top modules of tools/report/module_totals.h.
#include "report/module_totals.h"

#include <gtest/gtest.h>

#include <string>

#include "report/step_phases.h"
#include "support/builders.h"

namespace chakrashim::tools::report {
namespace {

struct Spans {
  EventTable table;
  void add(const std::string& name, std::int64_t start, std::int64_t end, std::int64_t tid = 1,
           const char* cat = "user_annotation") {
    table.add(testing_support::complete_event(cat, name, start, end - start, 1, tid));
  }
  const ModuleTotal* find(const std::vector<ModuleTotal>& m, const std::string& name) const {
    for (const auto& t : m)
      if (table.names[t.name] == "nn.Module: " + name) return &t;
    return nullptr;
  }
};

TEST(ModuleTotals, TotalAndSelfTimePerModulePathOnEachThread) {
  Spans s;
  s.add("nn.Module: Net", 0, 100);
  s.add("nn.Module: Net.encoder", 10, 60);
  s.add("nn.Module: Net.encoder.0", 10, 30);  // starts with its parent
  s.add("nn.Module: Net.encoder.1", 30, 55);
  s.add("nn.Module: Net.head", 70, 90);
  s.add("aten::linear", 12, 28, 1, "cpu_op");  // an op: not a module
  s.add("nn.Module: Net", 200, 240);          // a second call
  s.add("nn.Module: Aux", 5, 50, 2);          // another thread, overlapping in time
  s.add("nn.Module: Aux.proj", 10, 20, 2);
  const std::vector<ModuleTotal> m = module_totals(s.table);
  ASSERT_EQ(m.size(), 7u);
  EXPECT_EQ(s.table.names[m[0].name], "nn.Module: Net");  // by total time
  const ModuleTotal* net = s.find(m, "Net");
  EXPECT_EQ(net->calls, 2u);
  EXPECT_EQ(net->total_ns, 140);
  EXPECT_EQ(net->self_ns, 140 - 50 - 20);  // less encoder and head, not the other thread's Aux
  EXPECT_EQ(s.find(m, "Net.encoder")->self_ns, 50 - 20 - 25);
  EXPECT_EQ(s.find(m, "Net.encoder.0")->self_ns, 20);
  EXPECT_EQ(s.find(m, "Aux")->self_ns, 45 - 10);
  EXPECT_EQ(s.find(m, "Aux.proj")->total_ns, 10);
}

TEST(ModuleTotals, NoneWithoutModuleScopesAndTheyAreNotRecordFunctionScopes) {
  Spans s;
  s.add("encoder.layers.3.attn", 0, 10);
  EXPECT_TRUE(module_totals(s.table).empty());
  s.add("nn.Module: Net", 0, 100);
  const std::vector<ScopeTotal> scopes = scope_totals(s.table);
  ASSERT_EQ(scopes.size(), 1u);
  EXPECT_EQ(s.table.names[scopes[0].name], "encoder.layers.3.attn");
  ASSERT_EQ(module_totals(s.table).size(), 1u);
}

TEST(ModuleTotals, AChildPastItsParentsEndTakesOffOnlyWhatLiesInside) {
  Spans s;
  s.add("nn.Module: A", 0, 100);
  s.add("nn.Module: A.b", 90, 130);  // not nested as records nest: clipped
  const std::vector<ModuleTotal> m = module_totals(s.table);
  EXPECT_EQ(s.find(m, "A")->self_ns, 90);
  EXPECT_EQ(s.find(m, "A.b")->self_ns, 40);
}

}  // namespace
}  // namespace chakrashim::tools::report
