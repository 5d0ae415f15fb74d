#include "link/launch_parents.h"

#include <algorithm>
#include <tuple>

namespace chakrashim::tools::link {

namespace {

// CPU ops ordered by (tid, External id, position): one thread's ops with one
// External id form a run, in ts order, found by binary search.
class ByThreadAndExternalId {
 public:
  explicit ByThreadAndExternalId(const std::vector<CpuOp>& cpu) : cpu_(cpu), order_(cpu.size()) {
    for (std::uint32_t i = 0; i < order_.size(); ++i) order_[i] = i;
    std::sort(order_.begin(), order_.end(), [this](std::uint32_t a, std::uint32_t b) {
      return std::tie(cpu_[a].tid, cpu_[a].external_id, a) < std::tie(cpu_[b].tid, cpu_[b].external_id, b);
    });
  }

  std::span<const std::uint32_t> run(std::int64_t tid, std::int64_t external_id) const {
    const auto key = std::pair{tid, external_id};
    const auto [lo, hi] = std::equal_range(
        order_.begin(), order_.end(), key,
        [this](const auto& x, const auto& y) { return as_key(x) < as_key(y); });
    return {order_.data() + (lo - order_.begin()), static_cast<std::size_t>(hi - lo)};
  }

 private:
  std::pair<std::int64_t, std::int64_t> as_key(std::uint32_t i) const { return {cpu_[i].tid, cpu_[i].external_id}; }
  static std::pair<std::int64_t, std::int64_t> as_key(const std::pair<std::int64_t, std::int64_t>& k) { return k; }

  const std::vector<CpuOp>& cpu_;
  std::vector<std::uint32_t> order_;
};

// The latest op of `ops` starting before `ts`, skipping nccl:coalesced when
// asked.
std::optional<std::uint32_t> latest_before(const std::vector<CpuOp>& cpu, std::span<const std::uint32_t> ops,
                                           std::int64_t ts, bool skip_coalesced) {
  auto pos = last_before(cpu, ops, ts);
  if (!pos) return std::nullopt;
  for (std::size_t k = *pos + 1; k-- > 0;) {
    if (!(skip_coalesced && cpu[ops[k]].nccl_coalesced)) return ops[k];
  }
  return std::nullopt;
}

const Launch* launch_of(const std::vector<Launch>& launches, std::int64_t correlation) {
  const auto it = std::lower_bound(launches.begin(), launches.end(), correlation,
                                   [](const Launch& l, std::int64_t c) { return l.correlation < c; });
  return it != launches.end() && it->correlation == correlation ? &*it : nullptr;
}

}  // namespace

LaunchParents find_launch_parents(const DeviceOps& device, const CpuThreads& threads) {
  LaunchParents out;
  out.parent_external_id.resize(device.gpu.size());
  const ByThreadAndExternalId runs(device.cpu);
  for (std::size_t g = 0; g < device.gpu.size(); ++g) {
    const GpuOp& gpu = device.gpu[g];
    const Launch* launch = launch_of(device.launches, gpu.correlation);
    if (launch == nullptr) {
      ++out.no_launch;
      continue;
    }
    auto parent = latest_before(device.cpu, runs.run(launch->tid, gpu.external_id), launch->ts, gpu.nccl_name);
    if (!parent) {
      if (const auto thread = threads.thread_of(launch->tid)) {
        parent = latest_before(device.cpu, threads.ops(*thread), launch->ts, gpu.nccl_name);
      }
    }
    if (!parent) {
      ++out.no_parent;
      continue;
    }
    out.parent_external_id[g] = device.cpu[*parent].external_id;
  }
  return out;
}

}  // namespace chakrashim::tools::link
