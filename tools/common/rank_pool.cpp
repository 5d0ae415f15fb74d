#include "common/rank_pool.h"

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

namespace chakrashim::tools {

void for_each_index(std::size_t count, std::size_t threads, const std::function<void(std::size_t)>& fn) {
  const std::size_t workers = std::min(std::max<std::size_t>(threads, 1), count);
  if (workers <= 1) {
    for (std::size_t i = 0; i < count; ++i) fn(i);
    return;
  }
  std::atomic<std::size_t> next{0};
  std::vector<std::jthread> pool;
  pool.reserve(workers);
  for (std::size_t w = 0; w < workers; ++w) {
    pool.emplace_back([&] {
      for (std::size_t i = next.fetch_add(1); i < count; i = next.fetch_add(1)) fn(i);
    });
  }
}  // jthreads join here

std::size_t default_threads() { return std::max(1u, std::thread::hardware_concurrency()); }

}  // namespace chakrashim::tools
