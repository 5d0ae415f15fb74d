// chakra_trace_link's inter-thread order (trace_linker.py,
// enforce_inter_thread_order), as the rf_id each CPU op depends on:
//   per thread, ops in ts order fall into groups split by gaps of more than
//   1 ms (next start - previous start - previous dur); at each group's first
//   op, the dependency is the latest-starting CPU op of any other thread
//   that starts strictly before it (and after 0); every op of the group
//   takes that op's rf_id, unless it is absent or 0 (Python's falsy test).
// Ties between threads go to the thread that appeared first, and within a
// thread to its first op with that start, as Chakra's loop finds them.
//   thread A: op a1 [0.1ms, +1ms) rf 5     thread B: op b1 [5ms, +1ms)
//   -> b1 depends on rf 5; a1 depends on nothing (no earlier op elsewhere)
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "link/cpu_threads.h"
#include "link/device_ops.h"

namespace chakrashim::tools::link {

// Chakra's threshold, in its microseconds.
inline constexpr std::int64_t kInterThreadGapNs = 1000 * 1000;

// One value per cpu op: the rf_id of the op it depends on, if any.
std::vector<std::optional<std::int64_t>> inter_thread_rf_ids(const std::vector<CpuOp>& cpu,
                                                             const CpuThreads& threads);

}  // namespace chakrashim::tools::link
