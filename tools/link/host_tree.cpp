#include "link/host_tree.h"

#include <algorithm>
#include <numeric>
#include <utility>

namespace chakrashim::tools::link {

namespace {

constexpr std::uint64_t kRootId = 1;

// Marks what node 1 reaches through parent -> child edges.
void mark_reachable(const std::vector<HostNode>& nodes, HostTree& tree) {
  const auto root = find_node(nodes, tree, kRootId);
  if (!root) return;
  tree.has_root = true;
  // Edges (parent position, child position), sorted: a CSR adjacency.
  std::vector<std::pair<std::uint32_t, std::uint32_t>> edges;
  for (std::uint32_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].id == kRootId || !nodes[i].parent) continue;
    if (const auto p = find_node(nodes, tree, *nodes[i].parent)) edges.emplace_back(*p, i);
  }
  std::sort(edges.begin(), edges.end());
  std::vector<std::uint32_t> stack{*root};
  tree.reachable[*root] = true;
  while (!stack.empty()) {
    const std::uint32_t at = stack.back();
    stack.pop_back();
    auto it = std::lower_bound(edges.begin(), edges.end(), std::pair<std::uint32_t, std::uint32_t>{at, 0});
    for (; it != edges.end() && it->first == at; ++it) {
      // A visited test also stops the cycles that would hang et_replay.
      if (tree.reachable[it->second]) continue;
      tree.reachable[it->second] = true;
      stack.push_back(it->second);
    }
  }
}

}  // namespace

HostTree build_host_tree(const std::vector<HostNode>& nodes) {
  HostTree tree;
  tree.by_id.resize(nodes.size());
  std::iota(tree.by_id.begin(), tree.by_id.end(), 0u);
  for (std::size_t i = 1; i < nodes.size(); ++i) {
    if (nodes[i].id < nodes[i - 1].id) tree.file_in_id_order = false;
  }
  if (!tree.file_in_id_order) {
    std::stable_sort(tree.by_id.begin(), tree.by_id.end(),
                     [&nodes](std::uint32_t a, std::uint32_t b) { return nodes[a].id < nodes[b].id; });
  }
  for (std::size_t k = 1; k < tree.by_id.size(); ++k) {
    if (nodes[tree.by_id[k]].id == nodes[tree.by_id[k - 1]].id) {
      tree.duplicate_id = nodes[tree.by_id[k]].id;
      return tree;
    }
  }
  tree.reachable.assign(nodes.size(), false);
  mark_reachable(nodes, tree);
  return tree;
}

std::optional<std::uint32_t> find_node(const std::vector<HostNode>& nodes, const HostTree& tree, std::uint64_t id) {
  const auto it = std::lower_bound(tree.by_id.begin(), tree.by_id.end(), id,
                                   [&nodes](std::uint32_t i, std::uint64_t v) { return nodes[i].id < v; });
  if (it == tree.by_id.end() || nodes[*it].id != id) return std::nullopt;
  return *it;
}

}  // namespace chakrashim::tools::link
