// Unit tests for one step's timeline (tools/report/timeline.h); the step it
// shows by default is rank_report_test's.
#include "report/timeline.h"

#include <gtest/gtest.h>

#include "support/builders.h"

namespace chakrashim::tools::report {
namespace {

// A pid under 10 is a GPU's, and its tid a stream.
TraceEvent timeline_event(const char* cat, const char* name, std::int64_t ts, std::int64_t dur, std::int64_t pid,
                          std::int64_t tid) {
  return pid < 10 ? testing_support::gpu_event(cat, name, ts, dur, pid, tid)
                  : testing_support::complete_event(cat, name, ts, dur, pid, tid);
}

EventTable table() {
  EventTable t;
  for (const auto& e : {timeline_event("user_annotation", "ProfilerStep#7", 100, 100, 50, 51),
                        timeline_event("cpu_op", "aten::linear", 110, 50, 50, 51),
                        timeline_event("cpu_op", "aten::addmm", 120, 20, 50, 51),
                        timeline_event("cpu_op", "aten::mm", 150, 80, 50, 52),
                        timeline_event("kernel", "void gemm()", 130, 90, 0, 7),
                        timeline_event("cpu_op", "aten::before", 10, 20, 50, 51)})
    t.add(e);
  return t;
}

TEST(BuildTimeline, PutsTheStepFirstThenNestedOpsThenStreams) {
  const EventTable t = table();
  const Timeline tl = build_timeline(t, t.steps[0], 100);
  EXPECT_EQ(tl.step, 7u);
  EXPECT_EQ(tl.dur_ns, 100);
  ASSERT_EQ(tl.rows.size(), 3u);
  EXPECT_EQ(tl.rows[0].label, "thread 51 (steps)");
  EXPECT_EQ(tl.rows[1].label, "thread 52");
  EXPECT_EQ(tl.rows[2].label, "GPU 0 stream 7");
  EXPECT_EQ(tl.rows[0].depth, 3u);  // step, linear, addmm
  ASSERT_EQ(tl.bars.size(), 5u);  // aten::before lies outside the step
  EXPECT_EQ(tl.bars[0].kind, BarKind::step);
  EXPECT_EQ(tl.names[tl.bars[0].name], "ProfilerStep#7");
  int named = 0;  // each of the three below is there: their checks ran
  for (const auto& b : tl.bars) {
    const std::string& name = tl.names[b.name];
    if (name == "aten::addmm") {
      ++named;
      EXPECT_EQ(b.depth, 2u);
    }
    if (name == "aten::mm") {
      ++named;
      EXPECT_EQ(b.depth, 0u);
    }
    if (name == "void gemm()") {
      ++named;
      EXPECT_EQ(b.kind, BarKind::compute);
      EXPECT_EQ(b.start, 30);
      EXPECT_EQ(b.end, 100);  // clipped to the step
    }
  }
  EXPECT_EQ(named, 3);
}

TEST(BuildTimeline, KeepsTheLongestBarsOverTheLimit) {
  const EventTable t = table();
  const Timeline tl = build_timeline(t, t.steps[0], 2);
  EXPECT_EQ(tl.left_out, 2u);
  ASSERT_EQ(tl.bars.size(), 3u);  // the step's bar and the two longest
  EXPECT_EQ(tl.names[tl.bars[1].name], "void gemm()");
}

}  // namespace
}  // namespace chakrashim::tools::report
