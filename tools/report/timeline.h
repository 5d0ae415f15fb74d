// One step of one rank as rows of bars, for the HTML page's timeline: a row
// per host thread (bars stacked by nesting depth) and a row per GPU stream.
// Bars are clipped to the step. A step with more bars than the page can
// draw keeps the longest ones and counts the rest. The step's own bar is
// the stepping thread's top level (row 0, depth 0). Pure.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "report/event_table.h"

namespace chakrashim::tools::report {

enum class BarKind : std::uint8_t { step, host, compute, communication, memory };

struct TimelineRow {
  std::string label;  // "thread 4097 (steps)", "GPU 0 stream 7"
  std::uint32_t depth = 1;  // sub-rows the row needs
};

struct TimelineBar {
  std::int64_t start = 0, end = 0;  // relative to the step's start
  std::uint32_t row = 0;
  std::uint32_t depth = 0;
  std::uint32_t name = 0;  // index into Timeline::names
  BarKind kind = BarKind::host;
};

struct Timeline {
  std::uint64_t step = 0;
  std::int64_t dur_ns = 0;
  std::vector<TimelineRow> rows;
  std::vector<TimelineBar> bars;
  std::vector<std::string> names;
  std::uint64_t left_out = 0;  // bars over the limit or too deep
};

inline constexpr std::uint32_t kTimelineMaxDepth = 8;

Timeline build_timeline(const EventTable& table, const StepSpan& step, std::size_t max_bars);

}  // namespace chakrashim::tools::report
