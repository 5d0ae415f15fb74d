// The CPU ops grouped by thread, the way chakra_trace_link's dict of lists
// holds them: threads in order of their first op (by ts), and each thread's
// ops in the global ts order. Several rules walk or search these groups.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "link/device_ops.h"

namespace chakrashim::tools::link {

class CpuThreads {
 public:
  explicit CpuThreads(const std::vector<CpuOp>& cpu);

  std::size_t size() const { return tids_.size(); }
  std::int64_t tid(std::size_t thread) const { return tids_[thread]; }
  // Indices into the cpu vector, in ts order (ties in file order).
  std::span<const std::uint32_t> ops(std::size_t thread) const {
    return {ops_.data() + offsets_[thread], ops_.data() + offsets_[thread + 1]};
  }
  std::optional<std::size_t> thread_of(std::int64_t tid) const;

 private:
  std::vector<std::int64_t> tids_;
  std::vector<std::uint32_t> offsets_;
  std::vector<std::uint32_t> ops_;
  std::unordered_map<std::int64_t, std::size_t> by_tid_;
};

// The last position in `ops` (ts-ordered indices into cpu) whose op starts
// strictly before `ts`, or nullopt: Python's bisect_left(ts) - 1.
std::optional<std::size_t> last_before(const std::vector<CpuOp>& cpu, std::span<const std::uint32_t> ops,
                                       std::int64_t ts);

}  // namespace chakrashim::tools::link
