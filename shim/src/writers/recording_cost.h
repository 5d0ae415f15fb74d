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
// A lower bound of the whole cost: what lands inside an op's own span (our
// start callbacks after its start, our end callbacks before its end) is
// not between two ops, and autograd's per-node work is not either. The
// median of the pairs, so that the odd caller with real work between two
// calls moves it little. Pure: the writer thread computes it.
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
  std::int64_t per_op_ns = 0;  // the median gap
  std::uint64_t pairs = 0;     // the gaps it is the median of
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

 private:
  std::vector<std::int64_t> gaps_;
};

}  // namespace chakrashim::writers
