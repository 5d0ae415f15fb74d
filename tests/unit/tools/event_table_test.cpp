// Unit tests for the table of a device trace's events that report keeps
// (tools/report/event_table.h).
#include "report/event_table.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <utility>

#include "support/builders.h"

namespace chakrashim::tools::report {
namespace {

TEST(EventTable, KeepsTimedHostAndGpuEventsOnly) {
  const auto host = [](const char* cat, const char* name, std::int64_t ts, std::int64_t dur) {
    return testing_support::complete_event(cat, name, ts, dur, 100, 1);
  };
  EventTable t;
  TraceEvent meta = host("", "thread_name", 0, 0);
  meta.ph = "M";
  t.add(meta);
  TraceEvent flow = host("ac2g", "", 5, 0);
  flow.ph = "f";
  t.add(flow);
  t.add(host("gpu_user_annotation", "## forward ##", 0, 10));
  t.add(host("python_function", "train.py(12): step", 0, 10));
  TraceEvent untimed = host("cpu_op", "aten::mm", 0, 0);
  untimed.dur_ns.reset();
  t.add(untimed);
  EXPECT_TRUE(t.host.empty());
  EXPECT_TRUE(t.gpu.empty());
  t.add(testing_support::gpu_event("kernel", "ncclDevKernel_AllReduce", 0, 10, 0, 7));
  ASSERT_EQ(t.gpu.size(), 1u);
  EXPECT_EQ(t.gpu[0].kind, GpuKind::communication);
  EXPECT_EQ(t.lanes[t.gpu[0].lane], (std::pair<std::int64_t, std::int64_t>{0, 7}));
}

}  // namespace
}  // namespace chakrashim::tools::report
