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
  // [series][category], optional: marked bars (partial steps) are drawn
  // hatched-light with a dashed outline, and say so on hover and below.
  std::vector<std::vector<bool>> marked;
  std::string mark_label = "partial step";
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

// One step of one rank: a lane per thread and stream, bars by nesting depth,
// with a legend for the colours that appear (GPU kinds only when the
// timeline has GPU rows).
std::string timeline_chart(const Timeline& timeline);

// A rank x step heatmap of step time: a column per rank, a row per step,
// each cell coloured by its time against that step's median over ranks, so
// that slow ranks stand out as dark columns. Hover gives the value.
struct Heatmap {
  std::vector<std::uint64_t> ranks;  // columns, in order
  std::vector<std::uint64_t> steps;  // rows, in order
  std::vector<std::vector<double>> ms;  // [rank][step]; negative: absent
  std::vector<std::vector<bool>> partial;  // [rank][step]
  std::vector<double> median_ms;        // [step]
};
// The colour of a cell at `ratio` = its time / the step's median:
//   <= 1.05 "#deebf7" ... > 1.5 "#b30000"
std::string_view heat_color(double ratio);
std::string heatmap_chart(const Heatmap& chart);

}  // namespace chakrashim::tools::report
