#include "link/exclusive_durations.h"

#include <algorithm>

namespace chakrashim::tools::link {

namespace {

// Op `at`'s exclusive time, given its thread's ops in (ts, dur) order.
std::int64_t exclusive_of(const std::vector<CpuOp>& cpu, const std::vector<std::uint32_t>& order,
                          std::size_t at) {
  const CpuOp& op = cpu[order[at]];
  const std::int64_t end = op.ts + op.dur;
  std::int64_t covered = 0;
  bool open = false;
  std::int64_t run_start = 0, run_end = 0;  // the merged region being grown
  for (std::size_t j = at + 1; j < order.size(); ++j) {
    const CpuOp& c = cpu[order[j]];
    const std::int64_t c_end = c.ts + c.dur;
    if (c.ts >= op.ts && c_end <= end) {
      // Children arrive by start time, so merging needs only the last region.
      if (open && c.ts <= run_end) {
        run_end = std::max(run_end, c_end);
      } else {
        if (open) covered += run_end - run_start;
        run_start = c.ts;
        run_end = c_end;
        open = true;
      }
    }
    if (end < c.ts) break;
  }
  if (open) covered += run_end - run_start;
  return op.dur - covered;
}

}  // namespace

std::vector<std::int64_t> exclusive_durations(const std::vector<CpuOp>& cpu, const CpuThreads& threads) {
  std::vector<std::int64_t> out(cpu.size(), 0);
  std::vector<std::uint32_t> order;
  for (std::size_t t = 0; t < threads.size(); ++t) {
    const auto ops = threads.ops(t);
    order.assign(ops.begin(), ops.end());
    std::stable_sort(order.begin(), order.end(), [&cpu](std::uint32_t a, std::uint32_t b) {
      return cpu[a].ts != cpu[b].ts ? cpu[a].ts < cpu[b].ts : cpu[a].dur < cpu[b].dur;
    });
    for (std::size_t k = 0; k < order.size(); ++k) out[order[k]] = exclusive_of(cpu, order, k);
  }
  return out;
}

}  // namespace chakrashim::tools::link
