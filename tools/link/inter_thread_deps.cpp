#include "link/inter_thread_deps.h"

#include <algorithm>

namespace chakrashim::tools::link {

namespace {

// The op Chakra's find_last_cpu_node_before_timestamp returns: the greatest
// start below `ts` (and above 0) on threads other than `exclude`.
std::optional<std::uint32_t> last_elsewhere(const std::vector<CpuOp>& cpu, const CpuThreads& threads,
                                            std::size_t exclude, std::int64_t ts) {
  std::optional<std::uint32_t> best;
  std::int64_t best_ts = 0;
  for (std::size_t t = 0; t < threads.size(); ++t) {
    if (t == exclude) continue;
    const auto ops = threads.ops(t);
    const auto pos = last_before(cpu, ops, ts);
    if (!pos) continue;
    const std::int64_t found = cpu[ops[*pos]].ts;
    // Strictly greater: an equal start on a later thread does not replace.
    if (found <= best_ts) continue;
    // Within a thread Chakra keeps the first op that reached this start.
    const auto first = std::lower_bound(ops.begin(), ops.begin() + static_cast<std::ptrdiff_t>(*pos) + 1, found,
                                        [&cpu](std::uint32_t i, std::int64_t v) { return cpu[i].ts < v; });
    best = *first;
    best_ts = found;
  }
  return best;
}

}  // namespace

std::vector<std::optional<std::int64_t>> inter_thread_rf_ids(const std::vector<CpuOp>& cpu,
                                                             const CpuThreads& threads) {
  std::vector<std::optional<std::int64_t>> out(cpu.size());
  for (std::size_t t = 0; t < threads.size(); ++t) {
    const auto ops = threads.ops(t);
    std::optional<std::int64_t> current;
    for (std::size_t k = 0; k < ops.size(); ++k) {
      const CpuOp& op = cpu[ops[k]];
      const bool group_start = k == 0 || [&] {
        const CpuOp& prev = cpu[ops[k - 1]];
        return op.ts - prev.ts - prev.dur > kInterThreadGapNs;
      }();
      if (group_start) {
        const auto dep = threads.size() > 1 ? last_elsewhere(cpu, threads, t, op.ts) : std::nullopt;
        current = dep ? cpu[*dep].rf_id : std::nullopt;
        if (current && *current == 0) current.reset();  // Python: `if rf_id:`
      }
      out[ops[k]] = current;
    }
  }
  return out;
}

}  // namespace chakrashim::tools::link
