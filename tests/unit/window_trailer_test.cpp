// Unit tests for window_trailer (shim/src/writers/window_trailer.h): the
// device trace's chakrashim metadata for each way a window ends.
#include "writers/window_trailer.h"

#include <gtest/gtest.h>

namespace chakrashim::writers {
namespace {

WindowEnd whole_window() {
  WindowEnd w;
  w.start = 3;
  w.end = 5;
  w.warmup = 1;
  w.active = 2;
  w.kept = {4, 5};
  w.host_on = w.host_asked = true;
  w.device_on = true;
  w.cupti_state = "ok";
  return w;
}

TEST(WindowTrailer, AWindowThatReachedItsEndStepIsWhole) {
  const TraceTrailer t = window_trailer(whole_window());
  EXPECT_EQ(t.steps.start, 3u);
  EXPECT_EQ(t.steps.end, 5u);
  EXPECT_EQ(t.steps.warmup, 1u);
  EXPECT_EQ(t.steps.active, 2u);
  EXPECT_EQ(t.steps.captured, (std::vector<std::uint64_t>{4, 5}));
  EXPECT_FALSE(t.steps.cut_short);
  EXPECT_FALSE(t.steps.partial_last_step);
  EXPECT_EQ(t.steps.reason, "end_step");
  EXPECT_EQ(t.host_trace, "on");
  EXPECT_EQ(t.cupti, "ok");
}

TEST(WindowTrailer, ASignalCutsTheWindowAndItsPartialStepIsNoCapturedStep) {
  WindowEnd w = whole_window();
  w.kept = {4, 5};
  w.partial_step = 5;
  w.reason = "signal:SIGTERM";
  w.window_cut_short = true;
  const TraceTrailer t = window_trailer(w);
  EXPECT_EQ(t.steps.captured, (std::vector<std::uint64_t>{4}));
  EXPECT_EQ(t.steps.partial_last_step, std::optional<std::uint64_t>(5));
  EXPECT_TRUE(t.steps.cut_short);
  EXPECT_EQ(t.steps.reason, "signal:SIGTERM");
}

TEST(WindowTrailer, TheWindowsOwnCutCountsOnlyForAnEarlyEnd) {
  // At the end step, the window's cut() may still say cut short (its last
  // step is not counted yet): the end step's reason wins.
  WindowEnd w = whole_window();
  w.window_cut_short = true;
  EXPECT_FALSE(window_trailer(w).steps.cut_short);
}

TEST(WindowTrailer, RecordsThatHitTheCapAsTheWindowEndedMakeItAMemoryCut) {
  WindowEnd w = whole_window();
  w.cut_by_memory = true;
  w.truncated_at_ns = 1234;
  const TraceTrailer t = window_trailer(w);
  EXPECT_EQ(t.steps.reason, "memory_cap");
  EXPECT_TRUE(t.steps.cut_short);
  EXPECT_EQ(t.truncated_at_ns, std::optional<std::int64_t>(1234));
  // An early end keeps its own reason, still marked cut.
  w.reason = "exit";
  EXPECT_EQ(window_trailer(w).steps.reason, "exit");
  EXPECT_TRUE(window_trailer(w).steps.cut_short);
}

TEST(WindowTrailer, TheHostAndDeviceStatesSayWhyATraceIsOff) {
  WindowEnd w = whole_window();
  w.host_on = false;
  w.host_state = "skipped: the job runs its own ExecutionTraceObserver";
  w.device_on = false;
  TraceTrailer t = window_trailer(w);
  EXPECT_EQ(t.host_trace, "skipped: the job runs its own ExecutionTraceObserver");
  EXPECT_EQ(t.cupti, "disabled");
  w.host_asked = false;  // CHAKRA_HOST_TRACE=0
  EXPECT_EQ(window_trailer(w).host_trace, "off");
}

}  // namespace
}  // namespace chakrashim::writers
