// The host side of one rank's report, from its EventTable: each captured
// step's time (its ProfilerStep#N duration), how that time splits between
// op self time and time outside any op on the stepping thread, and every
// op name's self and total time. Pure: no I/O.
//
// Self time is a span's duration minus the parts of it its children cover,
// with children found by nesting on the same thread. The ProfilerStep spans
// take part in the nesting, so a step's own self time is the time outside
// any op, and on a well-nested trace
//   step duration == outside_ops_ns + sum of the self times of its ops.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "report/event_table.h"

namespace chakrashim::tools::report {

struct StepTime {
  std::uint64_t step = 0;
  std::int64_t start_ns = 0, dur_ns = 0;
  std::int64_t ops_self_ns = 0;     // self time of the ops inside it, stepping thread
  std::int64_t outside_ops_ns = 0;  // the step's own self time
  bool partial = false;             // the metadata's partial_last_step
  // More than 1: the step holds that many iterations of the job's loop (a
  // GradScaler skipped the optimizer step of the others; the metadata's
  // steps.merged, issue #49).
  std::uint64_t iterations = 1;
  // The job's setup: step 0 of a chakrashim capture, which runs from the
  // bridge's attach (first-call compilation, allocator warm-up, data
  // loader start). torch.profiler's ProfilerStep#0 is an ordinary step
  // (issue #49: report called NeMo's the job's setup).
  bool setup = false;
};

struct StepSummary {
  std::uint64_t count = 0;  // complete steps (all steps when every one is partial)
  std::int64_t mean_ns = 0, min_ns = 0, max_ns = 0;
};

struct OpTotal {
  std::uint32_t name = 0;  // index into EventTable::names
  std::uint64_t calls = 0;
  std::int64_t self_ns = 0, total_ns = 0;  // all threads
  std::int64_t in_steps_self_ns = 0;       // stepping thread, inside a step
};

struct HostStats {
  std::vector<StepTime> steps;  // by start time; one per step number
  StepSummary summary;
  std::vector<OpTotal> ops;  // by self time, largest first
};

// Self times of `spans` (any order) with `steps` as extra parents:
// result[i] is span i's, result[spans.size() + k] is step k's.
// `step_of[i]` gets the index of the step holding span i, or -1.
std::vector<std::int64_t> self_times(const std::vector<HostSpan>& spans, const std::vector<StepSpan>& steps,
                                     std::vector<std::int32_t>* step_of);

// Step 0 of a chakrashim capture runs the job's setup: it can take 50 times
// a normal step, so it is marked and, like a partial step, kept out of
// mean, min and max.
inline bool is_setup_step(const StepTime& s) { return s.setup; }
// Counted in mean/min/max: neither partial, nor the setup step, nor one that
// holds several iterations.
inline bool counted_step(const StepTime& s) { return !s.partial && !is_setup_step(s) && s.iterations == 1; }

// {3 ms, 5 ms, 4 ms} -> mean 4 ms, min 3 ms, max 5 ms (partial steps and
// step 0 left out, unless nothing else is there)
StepSummary summarize(const std::vector<StepTime>& steps);

// One step per number (the first seen), sorted by start.
std::vector<StepSpan> unique_steps(std::vector<StepSpan> steps);

HostStats host_stats(const EventTable& table, std::optional<std::uint64_t> partial_step);

}  // namespace chakrashim::tools::report
