// What recording costs the job per recorded op, measured on the window's
// own spans after the window (docs/convert.md, "Our own recording cost"):
// the time between two consecutive aten ops called by an aten op on one
// thread. Between them runs C++ only (no Python, no autograd engine): the
// first op's end (torch's RecordFunction teardown, our end callbacks after
// the span's end) and the second's start (torch's setup, our start callbacks
// up to the span's start), and the few instructions of the caller between
// the two calls. Without us there is no RecordFunction at all, so nearly
// all of that time is the recording's: what each recorded op adds to the
// op that calls it, and what `convert` takes out of the timeline.
//
//   aten::linear [0, 10000]      aten::t [100, 1500]   aten::addmm [2100, 9800]
//     -> one pair, a gap of 600 ns
//
// The figure is the mean of those gaps, up to ten times their median: a
// mean, because what `convert` takes out is a sum over ops, and the cost
// is skewed (an op with many inputs costs more to record); up to ten times
// the median, because a gap that long is the caller's own work between two
// calls, or the machine (a preemption), not recording. On the example
// (docs/convert.md) the median is 627 ns, this mean 1,032, the whole mean
// 1,350, and the job loses 1.4 to 1.6 µs an op. What lands inside an op's
// own span (torch boxing its outputs for the ET) is not between two ops,
// and the autograd engine's work per backward node is not either. Pure:
// the writer thread computes it.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace chakrashim::writers {

struct OpInterval {
  std::int64_t start_ns = 0, end_ns = 0;
  bool aten = false;  // an operator, "aten::..."
};

struct RecordingCost {
  std::int64_t per_op_ns = 0;  // the mean gap, up to kOutlierFactor x the median
  std::uint64_t pairs = 0;     // the gaps it is the mean of
  std::int64_t median_ns = 0;  // their median, all gaps
};

class RecordingCostMeter {
 public:
  // The spans of one thread, any order (sorted here). At most kMaxPairs
  // gaps are kept, all threads together: enough for a median, and a bound
  // on the writer's memory on a window of millions of ops.
  void add_thread(std::vector<OpInterval> spans);
  // Nothing where no aten op called two aten ops (a job of Python-level
  // ops only, or spans off).
  std::optional<RecordingCost> result() const;

  static constexpr std::size_t kMaxPairs = 1 << 16;
  static constexpr std::int64_t kOutlierFactor = 10;

 private:
  std::vector<std::int64_t> gaps_;
};

}  // namespace chakrashim::writers
