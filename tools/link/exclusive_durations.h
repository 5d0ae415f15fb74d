// Exclusive durations of the CPU ops, by chakra_trace_link's rule
// (chakra_device_trace_loader.py, calculate_exclusive_dur), in exact
// integer nanoseconds where Chakra adds floats:
//   per thread, ops sorted by (ts, dur), stable; op i's children are the
//   ops after it in that order that lie inside it (start >= its start, end
//   <= its end), scanned until one starts after its end; exclusive = dur -
//   the length of the union of the children.
// A quirk kept on purpose: an op that starts with its parent and is shorter
// sorts before it, so it is not subtracted from the parent.
//   parent [0,10) child [2,5)  -> parent 7, child 3
//   parent [0,10) child [0,4)  -> parent 10 (the child sorts first), child 4
#pragma once

#include <cstdint>
#include <vector>

#include "link/cpu_threads.h"
#include "link/device_ops.h"

namespace chakrashim::tools::link {

// One value per cpu op, in the cpu vector's order.
std::vector<std::int64_t> exclusive_durations(const std::vector<CpuOp>& cpu, const CpuThreads& threads);

}  // namespace chakrashim::tools::link
