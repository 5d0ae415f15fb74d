// Interval arithmetic over half-open [start, end) nanosecond spans, for the
// GPU figures: busy time is the length of a union, overlap the length of an
// intersection of two unions.
//   merge({{0,10},{5,20},{30,40}}) -> {{0,20},{30,40}}   length -> 30
//   intersection_length({{0,20}}, {{10,30}}) -> 10
//   clip({{0,20},{30,40}}, 10, 35) -> {{10,20},{30,35}}
#pragma once

#include <cstdint>
#include <vector>

namespace chakrashim::tools::report {

struct Interval {
  std::int64_t start = 0, end = 0;
  bool operator==(const Interval&) const = default;
};

// Sorted, disjoint, non-empty intervals covering exactly the same points.
using IntervalSet = std::vector<Interval>;

IntervalSet merge(std::vector<Interval> spans);
std::int64_t length(const IntervalSet& set);
std::int64_t intersection_length(const IntervalSet& a, const IntervalSet& b);
IntervalSet clip(const IntervalSet& set, std::int64_t start, std::int64_t end);
// The points of `a` that are not in `b`.
IntervalSet subtract(const IntervalSet& a, const IntervalSet& b);

}  // namespace chakrashim::tools::report
