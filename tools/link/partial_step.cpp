#include "link/partial_step.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

namespace chakrashim::tools::link {

PartialCut cut_partial_step(std::int64_t cut_ns, const std::vector<HostNode>& host, DeviceOps& device) {
  PartialCut out;
  // CPU ops: an rf_id of a cut op that no kept op carries is a cut node's.
  std::unordered_set<std::int64_t> cut_rf, kept_rf;
  std::vector<CpuOp> cpu;
  cpu.reserve(device.cpu.size());
  for (auto& op : device.cpu) {
    if (op.ts >= cut_ns) {
      if (op.rf_id) cut_rf.insert(*op.rf_id);
      ++out.cpu_ops;
    } else {
      if (op.rf_id) kept_rf.insert(*op.rf_id);
      cpu.push_back(op);
    }
  }
  device.cpu = std::move(cpu);
  // Launches by correlation; a GPU op goes with its launch, or, without
  // one, by its own start.
  std::unordered_set<std::int64_t> cut_launches;
  std::vector<Launch> launches;
  for (const auto& l : device.launches) {
    if (l.ts >= cut_ns) cut_launches.insert(l.correlation);
    else launches.push_back(l);
  }
  std::unordered_set<std::int64_t> kept_launches;
  for (const auto& l : launches) kept_launches.insert(l.correlation);
  device.launches = std::move(launches);
  std::vector<GpuOp> gpu;
  for (const auto& g : device.gpu) {
    const bool cut = cut_launches.count(g.correlation) > 0 || (kept_launches.count(g.correlation) == 0 && g.ts >= cut_ns);
    if (cut) ++out.gpu_ops;
    else gpu.push_back(g);
  }
  device.gpu = std::move(gpu);

  // Host nodes: those joined to a cut op, and everything under them (a
  // parent's id may come after its child's: closed-at-edge nodes).
  out.host_dropped.assign(host.size(), false);
  std::unordered_map<std::uint64_t, std::vector<std::uint32_t>> children;
  std::unordered_map<std::uint64_t, std::uint32_t> position;
  for (std::uint32_t i = 0; i < host.size(); ++i) {
    position.emplace(host[i].id, i);
    if (host[i].parent && *host[i].parent != host[i].id) children[*host[i].parent].push_back(i);
  }
  std::vector<std::uint32_t> todo;
  for (std::uint32_t i = 0; i < host.size(); ++i) {
    const auto rf = host[i].rf_id;
    if (rf && *rf != 0 && cut_rf.count(static_cast<std::int64_t>(*rf)) && !kept_rf.count(static_cast<std::int64_t>(*rf)))
      todo.push_back(i);
  }
  while (!todo.empty()) {
    const std::uint32_t i = todo.back();
    todo.pop_back();
    if (out.host_dropped[i]) continue;
    out.host_dropped[i] = true;
    ++out.host_nodes;
    if (const auto it = children.find(host[i].id); it != children.end())
      for (const auto c : it->second) todo.push_back(c);
  }
  return out;
}

}  // namespace chakrashim::tools::link
