// Parallel work over ranks: fn(i) for i in [0, count) on up to `threads`
// threads. Each index runs exactly once; results go to slot i of the
// caller's vector, so the output order never depends on scheduling.
#pragma once

#include <cstddef>
#include <functional>

namespace chakrashim::tools {

void for_each_index(std::size_t count, std::size_t threads, const std::function<void(std::size_t)>& fn);

// The thread count to use by default: the machine's cores, at least 1.
std::size_t default_threads();

}  // namespace chakrashim::tools
