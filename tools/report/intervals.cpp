#include "report/intervals.h"

#include <algorithm>

namespace chakrashim::tools::report {

IntervalSet merge(std::vector<Interval> spans) {
  std::erase_if(spans, [](const Interval& i) { return i.end <= i.start; });
  std::sort(spans.begin(), spans.end(),
            [](const Interval& a, const Interval& b) { return a.start < b.start; });
  IntervalSet out;
  for (const auto& i : spans) {
    if (!out.empty() && i.start <= out.back().end) {
      out.back().end = std::max(out.back().end, i.end);
    } else {
      out.push_back(i);
    }
  }
  return out;
}

std::int64_t length(const IntervalSet& set) {
  std::int64_t total = 0;
  for (const auto& i : set) total += i.end - i.start;
  return total;
}

// Both sets are sorted and disjoint, so one linear walk finds every overlap.
std::int64_t intersection_length(const IntervalSet& a, const IntervalSet& b) {
  std::int64_t total = 0;
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const std::int64_t lo = std::max(a[i].start, b[j].start);
    const std::int64_t hi = std::min(a[i].end, b[j].end);
    if (hi > lo) total += hi - lo;
    if (a[i].end < b[j].end) ++i;
    else ++j;
  }
  return total;
}

IntervalSet clip(const IntervalSet& set, std::int64_t start, std::int64_t end) {
  IntervalSet out;
  for (const auto& i : set) {
    const Interval c{std::max(i.start, start), std::min(i.end, end)};
    if (c.end > c.start) out.push_back(c);
  }
  return out;
}

IntervalSet subtract(const IntervalSet& a, const IntervalSet& b) {
  IntervalSet out;
  std::size_t j = 0;
  for (const auto& i : a) {
    std::int64_t cursor = i.start;
    while (j < b.size() && b[j].end <= cursor) ++j;
    for (std::size_t k = j; k < b.size() && b[k].start < i.end; ++k) {
      if (b[k].start > cursor) out.push_back({cursor, b[k].start});
      cursor = std::max(cursor, b[k].end);
    }
    if (cursor < i.end) out.push_back({cursor, i.end});
  }
  return out;
}

}  // namespace chakrashim::tools::report
