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
//
// The whole cost, where the job's own steps tell it: the window's steps
// against the last steps before it, which ran unrecorded (step 0 left
// out: it holds the job's start). (fastest recorded step - fastest
// unrecorded step) / ops a step: the fastest of each, because a step is
// its work plus delays that only add (the machine, a data loader, the
// first steps' warm-up), and the fastest has the fewest. It sees what the
// gaps do not (docs/convert.md), needs two steps before the window and two
// in it, and is wrong for a job whose steps differ in work. Taken where it
// is larger than the gaps' figure (a lower bound), else the gaps', and
// only where it can be trusted (issue #50: one job's three identical runs
// gave 2,273 to 8,448 ns; a DDP rank 19,379, which took 27 of its 30 ms of
// gaps out; a job whose earlier steps ran under its own profiler 18,331):
//   - within its own noise: the two fastest steps of each kind differ by
//     as much as the figure says per op (twice the noise above it, or it
//     is refused), which is what tiny steps on a busy machine give;
//   - more than kStepCapFactor times the gaps' figure: recording does not
//     cost an op that much more than what the gaps between ops show (the
//     example: 1.4 to 1.6 us against 1.0), so the steps before the window
//     did other work, or ran under other load (an eval, the job's own
//     profiler, a changing batch).
// A refused figure leaves the gaps' and says why (step_refused), which
// convert repeats where it takes the cost out.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace chakrashim::writers {

struct OpInterval {
  std::int64_t start_ns = 0, end_ns = 0;
  bool aten = false;  // an operator, "aten::..."
};

struct RecordingCost {
  std::int64_t per_op_ns = 0;  // what convert takes out: step_ns if larger, else gap_ns
  bool from_steps = false;     // per_op_ns is step_ns
  std::int64_t gap_ns = 0;     // the mean gap, up to kOutlierFactor x the median
  std::uint64_t pairs = 0;     // the gaps it is the mean of
  std::int64_t median_ns = 0;  // their median, all gaps
  std::optional<std::int64_t> step_ns;  // from the step times, where known
  std::uint64_t unrecorded_steps = 0;   // the steps before the window it had (at most 8)
  std::string step_refused;             // why step_ns was not taken, where it was larger
};

// The step times' figure, and how far it could be off: the two fastest
// steps of each kind (recorded, unrecorded) differ by noise_ns an op, added.
struct StepFigure {
  std::int64_t per_op_ns = 0;
  std::int64_t noise_ns = 0;
};

inline constexpr std::int64_t kStepCapFactor = 3;

// The durations of the last kSteps steps that ran unrecorded. Filled on the
// stepping thread at each step end outside a window (one store), taken at
// the window's end.
class StepRing {
 public:
  static constexpr std::size_t kSteps = 8;
  void add(std::int64_t ns) {
    ns_[next_] = ns;
    next_ = (next_ + 1) % kSteps;
    if (count_ < kSteps) ++count_;
  }
  // The durations held, oldest first; empties the ring.
  std::vector<std::int64_t> take();

 private:
  std::int64_t ns_[kSteps] = {};
  std::size_t next_ = 0, count_ = 0;
};

// (fastest of `recorded` - fastest of `unrecorded`) / `ops_per_step`, or
// nothing: fewer than two of either, no ops, or no cost to see.
std::optional<std::int64_t> step_cost_per_op(std::vector<std::int64_t> unrecorded,
                                             std::vector<std::int64_t> recorded, double ops_per_step);
// The same, with its noise: (second fastest - fastest) of each kind, over
// `ops_per_step`, added.
std::optional<StepFigure> step_figure(std::vector<std::int64_t> unrecorded, std::vector<std::int64_t> recorded,
                                      double ops_per_step);

// The figure for the metadata: the gaps' (`gaps`), and the steps' where it
// is larger and trusted (above). Nothing where neither is known.
std::optional<RecordingCost> recording_cost_of(const std::optional<RecordingCost>& gaps,
                                               std::optional<StepFigure> step, std::uint64_t unrecorded_steps);

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
