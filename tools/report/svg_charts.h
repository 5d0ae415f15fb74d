// The page's charts as inline SVG text, built from plain numbers: no
// scripts, no fonts or styles from elsewhere, so the page draws offline.
// Every mark carries a <title>, which browsers show on hover.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "report/timeline.h"

namespace chakrashim::tools::report {

//   "a<b & \"c\"" -> "a&lt;b &amp; &quot;c&quot;"
std::string xml_escape(std::string_view text);

// The i-th of a fixed palette (cycled), as "#rrggbb".
std::string_view palette_color(std::size_t i);

// Axis ticks: a round step giving about `count` ticks up to `max`.
//   (7.3, 5) -> 2   (130, 5) -> 50   (0.04, 4) -> 0.01
double nice_tick(double max, int count);

// Bars grouped by category (steps), one bar per series (ranks), in ms.
struct GroupedBars {
  std::string y_label;
  std::vector<std::string> categories;  // x-axis groups
  std::vector<std::string> series;      // bars within a group, and the legend
  std::vector<std::vector<double>> values;  // [series][category]; negative: absent
};
std::string grouped_bar_chart(const GroupedBars& chart);

// One horizontal bar per row, split into named segments, in ms.
struct StackedBars {
  std::vector<std::string> rows;      // "rank 0"
  std::vector<std::string> segments;  // legend, in stacking order
  std::vector<std::string> colors;    // one per segment
  std::vector<std::vector<double>> values;  // [row][segment]
};
std::string stacked_bar_chart(const StackedBars& chart);

// One step of one rank: a lane per thread and stream, bars by nesting depth.
std::string timeline_chart(const Timeline& timeline);

}  // namespace chakrashim::tools::report
