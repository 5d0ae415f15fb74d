#include "link/cpu_threads.h"

#include <algorithm>

namespace chakrashim::tools::link {

CpuThreads::CpuThreads(const std::vector<CpuOp>& cpu) {
  std::vector<std::uint32_t> thread_of_op(cpu.size());
  std::vector<std::uint32_t> counts;
  for (std::size_t i = 0; i < cpu.size(); ++i) {
    const auto [it, inserted] = by_tid_.emplace(cpu[i].tid, tids_.size());
    if (inserted) {
      tids_.push_back(cpu[i].tid);
      counts.push_back(0);
    }
    thread_of_op[i] = static_cast<std::uint32_t>(it->second);
    ++counts[it->second];
  }
  // A counting sort keeps each thread's ops in cpu order.
  offsets_.assign(tids_.size() + 1, 0);
  for (std::size_t t = 0; t < tids_.size(); ++t) offsets_[t + 1] = offsets_[t] + counts[t];
  ops_.resize(cpu.size());
  std::vector<std::uint32_t> next(offsets_.begin(), offsets_.end() - 1);
  for (std::size_t i = 0; i < cpu.size(); ++i) ops_[next[thread_of_op[i]]++] = static_cast<std::uint32_t>(i);
}

std::optional<std::size_t> CpuThreads::thread_of(std::int64_t tid) const {
  const auto it = by_tid_.find(tid);
  if (it == by_tid_.end()) return std::nullopt;
  return it->second;
}

std::optional<std::size_t> last_before(const std::vector<CpuOp>& cpu, std::span<const std::uint32_t> ops,
                                       std::int64_t ts) {
  const auto it = std::lower_bound(ops.begin(), ops.end(), ts,
                                   [&cpu](std::uint32_t i, std::int64_t t) { return cpu[i].ts < t; });
  if (it == ops.begin()) return std::nullopt;
  return static_cast<std::size_t>(it - ops.begin()) - 1;
}

}  // namespace chakrashim::tools::link
