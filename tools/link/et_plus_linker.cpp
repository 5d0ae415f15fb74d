#include "link/et_plus_linker.h"

#include <algorithm>
#include <unordered_map>

#include "link/cpu_threads.h"
#include "link/exclusive_durations.h"
#include "link/inter_thread_deps.h"
#include "link/launch_parents.h"

namespace chakrashim::tools::link {

namespace {

// rf_id -> CPU op; for a repeated rf_id the last op in ts order wins, as in
// Chakra's dict comprehension.
class RfIdIndex {
 public:
  explicit RfIdIndex(const std::vector<CpuOp>& cpu) {
    for (std::uint32_t i = 0; i < cpu.size(); ++i) {
      if (cpu[i].rf_id) entries_.emplace_back(*cpu[i].rf_id, i);
    }
    std::stable_sort(entries_.begin(), entries_.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
  }
  std::optional<std::uint32_t> find(std::int64_t rf_id) const {
    auto it = std::upper_bound(entries_.begin(), entries_.end(), rf_id,
                               [](std::int64_t v, const auto& e) { return v < e.first; });
    if (it == entries_.begin() || std::prev(it)->first != rf_id) return std::nullopt;
    return std::prev(it)->second;
  }

 private:
  std::vector<std::pair<std::int64_t, std::uint32_t>> entries_;
};

// GPU ops grouped by their parent CPU op's External id, each group by ts.
class GpuGroups {
 public:
  explicit GpuGroups(const LaunchParents& parents) {
    for (std::uint32_t g = 0; g < parents.parent_external_id.size(); ++g) {
      if (const auto ext = parents.parent_external_id[g]) entries_.emplace_back(*ext, g);
    }
    std::sort(entries_.begin(), entries_.end());
  }
  auto group(std::int64_t external_id) const {
    return std::equal_range(entries_.begin(), entries_.end(), external_id, Less{});
  }

 private:
  using Entry = std::pair<std::int64_t, std::uint32_t>;
  struct Less {
    bool operator()(const Entry& e, std::int64_t v) const { return e.first < v; }
    bool operator()(std::int64_t v, const Entry& e) const { return v < e.first; }
  };
  std::vector<Entry> entries_;
};

struct DeviceRules {
  std::vector<std::int64_t> exclusive;
  std::vector<std::optional<std::int64_t>> inter_thread_rf;
  LaunchParents parents;
};

DeviceRules apply_device_rules(const DeviceOps& device) {
  const CpuThreads threads(device.cpu);
  return {exclusive_durations(device.cpu, threads), inter_thread_rf_ids(device.cpu, threads),
          find_launch_parents(device, threads)};
}

// Chakra's final pass: ctrl_deps through the id assigner, in output order.
void renumber_parents(const std::vector<HostNode>& host, const HostTree& tree, LinkPlan& plan,
                      std::uint64_t next_id) {
  std::unordered_map<std::uint64_t, std::uint64_t> fresh;  // unknown parent -> its new id
  for (const std::uint32_t i : tree.by_id) {
    if (!host[i].parent || plan.nodes[i].dropped) continue;
    if (const auto p = find_node(host, tree, *host[i].parent)) {
      plan.nodes[i].new_parent = plan.nodes[*p].new_id;
    } else {
      const auto [it, inserted] = fresh.emplace(*host[i].parent, next_id);
      if (inserted) ++next_id;
      plan.nodes[i].new_parent = it->second;
    }
  }
}

}  // namespace

LinkPlan link_et_plus(const std::vector<HostNode>& host, const DeviceOps& device, const std::vector<bool>* dropped) {
  LinkPlan plan;
  if (device.duplicate_correlation) {
    plan.error = "two launches share correlation " + std::to_string(*device.duplicate_correlation) +
                 " (chakra_trace_link refuses this too)";
    return plan;
  }
  const HostTree tree = build_host_tree(host);
  if (tree.duplicate_id) {
    plan.error = "two ET nodes share id " + std::to_string(*tree.duplicate_id);
    return plan;
  }
  const DeviceRules rules = apply_device_rules(device);
  const RfIdIndex by_rf(device.cpu);
  const GpuGroups groups(rules.parents);

  plan.nodes.resize(host.size());
  // rf_id -> new id of the latest host node linked to it (Chakra's
  // kineto_op.host_op, which only earlier nodes have set).
  std::unordered_map<std::int64_t, std::uint64_t> host_of_rf;
  std::vector<bool> gpu_used(device.gpu.size(), false);
  std::uint64_t next_id = 0;
  const auto left_out = [&](std::uint32_t i) { return dropped != nullptr && i < dropped->size() && (*dropped)[i]; };
  for (const std::uint32_t i : tree.by_id) {
    LinkedNode& node = plan.nodes[i];
    if (left_out(i)) {
      node.dropped = true;
      ++plan.stats.dropped;
      continue;
    }
    node.new_id = next_id++;
    if (!tree.reachable[i] || !host[i].rf_id) continue;
    const auto op_index = by_rf.find(static_cast<std::int64_t>(*host[i].rf_id));
    if (!op_index) continue;
    const CpuOp& op = device.cpu[*op_index];
    host_of_rf[static_cast<std::int64_t>(*host[i].rf_id)] = node.new_id;
    NodeTiming timing{op.ts, op.dur, rules.exclusive[*op_index], std::nullopt};
    if (const auto dep_rf = rules.inter_thread_rf[*op_index]) {
      if (const auto it = host_of_rf.find(*dep_rf); it != host_of_rf.end()) timing.inter_thread_dep = it->second;
    }
    node.timing = static_cast<std::uint32_t>(plan.timings.size());
    plan.timings.push_back(timing);
    const auto [lo, hi] = groups.group(op.external_id);
    node.first_child = static_cast<std::uint32_t>(plan.child_ops.size());
    for (auto it = lo; it != hi; ++it) {
      plan.child_ops.push_back(it->second);
      gpu_used[it->second] = true;
    }
    node.children = static_cast<std::uint32_t>(plan.child_ops.size() - node.first_child);
    next_id += node.children;
  }
  renumber_parents(host, tree, plan, next_id);

  plan.write_order.reserve(tree.by_id.size());
  for (const std::uint32_t i : tree.by_id)
    if (!plan.nodes[i].dropped) plan.write_order.push_back(i);
  plan.in_file_order = tree.file_in_id_order;
  LinkStats& s = plan.stats;
  s.host_nodes = host.size();
  s.reachable = static_cast<std::uint64_t>(std::count(tree.reachable.begin(), tree.reachable.end(), true));
  s.timed = plan.timings.size();
  s.cpu_ops = device.cpu.size();
  s.gpu_ops = device.gpu.size();
  s.memsets = device.memsets;
  s.gpu_children = plan.child_ops.size();
  s.gpu_unlinked = static_cast<std::uint64_t>(std::count(gpu_used.begin(), gpu_used.end(), false));
  s.gpu_no_launch = rules.parents.no_launch;
  s.gpu_no_parent = rules.parents.no_parent;
  return plan;
}

}  // namespace chakrashim::tools::link
