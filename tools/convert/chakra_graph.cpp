#include "convert/chakra_graph.h"

#include <algorithm>
#include <limits>
#include <unordered_map>

#include "convert/node_rules.h"

namespace chakrashim::tools::convert {

namespace {

constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();

// Node id -> index. Ids of an ET+ are dense (both linkers renumber from 0),
// so a table is the common case; a map covers the rest.
class IdIndex {
 public:
  // Returns the first duplicate id, if any.
  std::optional<std::uint64_t> build(const std::vector<EtPlusNode>& nodes) {
    std::uint64_t max_id = 0;
    for (const auto& n : nodes) max_id = std::max(max_id, n.id);
    dense_ = max_id < 4 * static_cast<std::uint64_t>(nodes.size()) + 1024;
    if (dense_) table_.assign(static_cast<std::size_t>(max_id) + 1, kNone);
    for (std::uint32_t i = 0; i < nodes.size(); ++i) {
      const std::uint64_t id = nodes[i].id;
      if (dense_) {
        if (table_[id] != kNone) return id;
        table_[id] = i;
      } else if (!map_.emplace(id, i).second) {
        return id;
      }
    }
    return std::nullopt;
  }
  std::uint32_t find(std::uint64_t id) const {
    if (dense_) return id < table_.size() ? table_[id] : kNone;
    const auto it = map_.find(id);
    return it == map_.end() ? kNone : it->second;
  }

 private:
  bool dense_ = true;
  std::vector<std::uint32_t> table_;
  std::unordered_map<std::uint64_t, std::uint32_t> map_;
};

std::string label(const EtPlusNode& n) { return "node " + std::to_string(n.id) + " (" + n.name + ")"; }

bool has(const std::vector<std::uint64_t>& deps, std::uint64_t id) {
  return std::find(deps.begin(), deps.end(), id) != deps.end();
}

class GraphBuilder {
 public:
  GraphBuilder(const EtPlus& trace, NodeEncoder& encoder) : nodes_(trace.nodes), encoder_(encoder) {}

  ChakraGraph run();

 private:
  bool fail(std::string why) {
    out_.error = std::move(why);
    return false;
  }
  bool gpu_op(std::uint32_t i) const { return nodes_[i].gpu && !is_metadata_name(nodes_[i].name); }
  void link_children();
  bool convert_nodes();
  bool convert_one(std::uint32_t i, bool gpu_child);
  void walk_from(std::uint32_t root, std::uint32_t stamp);
  void drop_dangling();
  bool check_deps();

  const std::vector<EtPlusNode>& nodes_;
  NodeEncoder& encoder_;
  ChakraGraph out_;
  IdIndex index_;
  std::vector<std::uint32_t> parent_;  // index of the parent, kNone if none
  // Children and GPU children in file order, as offsets into flat lists.
  std::vector<std::uint32_t> child_start_, children_, gpu_start_, gpu_children_;
  std::vector<std::uint8_t> converted_, kept_;
  std::vector<std::uint32_t> visit_;  // walk stamps
  std::vector<std::uint32_t> order_;  // conversion order
  std::vector<ChakraNode> graph_;     // by index
  std::vector<std::string> pg_name_;  // a send/recv kernel takes its record_param_comms's
};

void GraphBuilder::link_children() {
  const std::size_t n = nodes_.size();
  parent_.assign(n, kNone);
  child_start_.assign(n + 1, 0);
  gpu_start_.assign(n + 1, 0);
  for (std::uint32_t i = 0; i < n; ++i) {
    if (!nodes_[i].parent) continue;
    const std::uint32_t p = index_.find(*nodes_[i].parent);
    if (p == kNone) continue;
    parent_[i] = p;
    ++child_start_[p + 1];
    if (nodes_[i].gpu) ++gpu_start_[p + 1];
  }
  for (std::size_t i = 0; i < n; ++i) {
    child_start_[i + 1] += child_start_[i];
    gpu_start_[i + 1] += gpu_start_[i];
  }
  children_.resize(child_start_[n]);
  gpu_children_.resize(gpu_start_[n]);
  std::vector<std::uint32_t> fill(child_start_.begin(), child_start_.end() - 1);
  std::vector<std::uint32_t> gpu_fill(gpu_start_.begin(), gpu_start_.end() - 1);
  for (std::uint32_t i = 0; i < n; ++i) {
    const std::uint32_t p = parent_[i];
    if (p == kNone) continue;
    children_[fill[p]++] = i;
    if (nodes_[i].gpu) gpu_children_[gpu_fill[p]++] = i;
  }
  // The walk visits children by ascending id.
  for (std::size_t p = 0; p < n; ++p) {
    std::sort(children_.begin() + child_start_[p], children_.begin() + child_start_[p + 1],
              [this](std::uint32_t a, std::uint32_t b) { return nodes_[a].id < nodes_[b].id; });
  }
}

bool GraphBuilder::convert_one(std::uint32_t i, bool gpu_child) {
  const EtPlusNode& n = nodes_[i];
  ChakraNode& c = graph_[i];
  c.index = i;
  c.ctrl_dep.reset();
  if (parent_[i] != kNone && converted_[parent_[i]]) c.ctrl_dep = nodes_[parent_[i]].id;
  if (!converted_[i]) order_.push_back(i);
  converted_[i] = 1;
  if (is_metadata_name(n.name)) {
    c.kind = NodeKind::metadata;
    return true;
  }
  if (!n.gpu) {
    c.kind = NodeKind::comp;
    return true;
  }
  // A GPU node: its type from its own name or its launcher's.
  std::string_view launcher;
  if (is_send_recv_kernel(n.name)) {
    const EtPlusNode& parent = nodes_[parent_[i]];
    launcher = parent.name;
    if (launcher_is_grandparent(parent.name)) {
      if (parent_[parent_[i]] == kNone) {
        return fail(label(n) + ": its record_param_comms has no parent to name the send or recv "
                               "(chakra_converter fails with KeyError here)");
      }
      launcher = nodes_[parent_[parent_[i]]].name;
      if (!parent.pg_name.empty()) pg_name_[i] = parent.pg_name;
    }
  }
  c.kind = gpu_node_kind(n.name, launcher);
  if (!gpu_child) return true;
  const bool coll = c.kind == NodeKind::comm_coll;
  if (!coll && c.kind != NodeKind::comm_send && c.kind != NodeKind::comm_recv) return true;
  std::optional<CollKind> type;
  if (coll) {
    type = collective_kind(n.name);
    if (!type) return fail(label(n) + ": a collective whose type its name does not give (chakra_converter "
                                      "raises ValueError for it)");
  }
  if (!n.comm_size) {
    return fail(label(n) + ": its inputs cannot be sized as a comm_size (tensor values need numel and "
                           "itemsize at positions 3 and 4)");
  }
  const std::string& pg = pg_name_[i].empty() ? n.pg_name : pg_name_[i];
  c.comm = encoder_.comm(type, *n.comm_size, pg);
  ++(coll ? out_.stats.collectives : c.kind == NodeKind::comm_send ? out_.stats.sends : out_.stats.receives);
  return true;
}

bool GraphBuilder::convert_nodes() {
  const std::size_t n = nodes_.size();
  converted_.assign(n, 0);
  graph_.resize(n);
  pg_name_.resize(n);
  order_.reserve(n);
  for (std::uint32_t i = 0; i < n; ++i) {
    if (gpu_op(i)) continue;  // converted under its parent, if at all
    if (!convert_one(i, false)) return false;
    for (std::uint32_t k = gpu_start_[i]; k < gpu_start_[i + 1]; ++k) {
      if (!convert_one(gpu_children_[k], true)) return false;
    }
  }
  return true;
}

void GraphBuilder::walk_from(std::uint32_t root, std::uint32_t stamp) {
  // Each root's walk has its own visited set (the converter's is local to
  // one call): visit_[i] == stamp marks a node seen in this walk.
  std::vector<std::uint32_t> stack{root};
  std::uint32_t last_non_gpu = kNone, last_any = kNone;
  while (!stack.empty()) {
    const std::uint32_t cur = stack.back();
    stack.pop_back();
    if (visit_[cur] == stamp) continue;
    visit_[cur] = stamp;
    std::vector<std::uint64_t>& deps = graph_[cur].data_deps;
    if (gpu_op(cur)) {
      if (last_any != kNone && !has(deps, nodes_[last_any].id)) deps.push_back(nodes_[last_any].id);
      last_any = last_non_gpu;
    } else {
      const std::uint64_t other = nodes_[cur].inter_thread_dep;
      if (other != 0 && !has(deps, other)) deps.push_back(other);
      if (last_non_gpu != kNone && !has(deps, nodes_[last_non_gpu].id)) deps.push_back(nodes_[last_non_gpu].id);
      last_non_gpu = cur;
      last_any = cur;
    }
    // HTA's sync_dep: the converter keeps one only when the prior node's
    // start_time_micros is below this one's, and it sets neither (both 0).
    for (std::uint32_t k = child_start_[cur + 1]; k > child_start_[cur]; --k) {
      const std::uint32_t child = children_[k - 1];
      if (converted_[child] && visit_[child] != stamp) stack.push_back(child);
    }
  }
}

void GraphBuilder::drop_dangling() {
  // One pass, as the converter does it: a node is dropped when it has no
  // data deps and no node depends on it.
  std::vector<std::uint8_t> needed(nodes_.size(), 0);
  for (const std::uint32_t i : order_) {
    for (const auto d : graph_[i].data_deps) {
      const std::uint32_t k = index_.find(d);
      if (k != kNone) needed[k] = 1;
    }
  }
  kept_.assign(nodes_.size(), 0);
  for (const std::uint32_t i : order_) {
    kept_[i] = !graph_[i].data_deps.empty() || needed[i];
    if (!kept_[i]) {
      ++out_.stats.dropped_dangling;
      if (parent_[i] == kNone || parent_[i] == i) ++out_.stats.dropped_roots;  // the root is its own parent
    }
  }
}

bool GraphBuilder::check_deps() {
  for (const std::uint32_t i : order_) {
    if (!kept_[i]) continue;
    for (const auto d : graph_[i].data_deps) {
      const std::uint32_t k = index_.find(d);
      if (k == kNone || !kept_[k]) {
        return fail(label(nodes_[i]) + " depends on node " + std::to_string(d) +
                    ", which is not in the converted trace (chakra_converter fails with KeyError)");
      }
    }
  }
  // Depth-first over data deps with an explicit stack: 0 new, 1 on the
  // path, 2 done. A dep on the path closes a cycle.
  std::vector<std::uint8_t> state(nodes_.size(), 0);
  struct Step {
    std::uint32_t node;
    std::uint32_t next_dep;
  };
  std::vector<Step> path;
  for (const std::uint32_t start : order_) {
    if (!kept_[start] || state[start] != 0) continue;
    path.push_back({start, 0});
    state[start] = 1;
    while (!path.empty()) {
      Step& top = path.back();
      const auto& deps = graph_[top.node].data_deps;
      if (top.next_dep == deps.size()) {
        state[top.node] = 2;
        path.pop_back();
        continue;
      }
      const std::uint32_t k = index_.find(deps[top.next_dep++]);
      if (state[k] == 2) continue;
      if (state[k] == 1) {
        // The cycle: from k's place on the path to the top, then k again.
        auto it = std::find_if(path.begin(), path.end(), [k](const Step& s) { return s.node == k; });
        std::string text;
        std::size_t shown = 0;
        const std::size_t length = static_cast<std::size_t>(path.end() - it);
        for (; it != path.end(); ++it, ++shown) {
          if (shown == 6 && length > 8) {
            text += " -> ... (" + std::to_string(length - 7) + " more)";
            it = path.end() - 1;
          }
          text += (text.empty() ? "" : " -> ") + label(nodes_[it->node]);
        }
        return fail("dependency cycle: " + text + " -> " + label(nodes_[k]) +
                    " (a simulator would wait forever; chakra_converter refuses it too)");
      }
      state[k] = 1;
      path.push_back({k, 0});
    }
  }
  return true;
}

ChakraGraph GraphBuilder::run() {
  if (const auto dup = index_.build(nodes_)) {
    out_.error = "node id " + std::to_string(*dup) + " appears twice";
    return std::move(out_);
  }
  link_children();
  if (!convert_nodes()) return std::move(out_);
  out_.stats.converted = order_.size();
  visit_.assign(nodes_.size(), 0);
  std::uint32_t stamp = 0;
  for (const std::uint32_t i : order_) {
    if (is_root_name(nodes_[i].name)) walk_from(i, ++stamp);
  }
  visit_ = {};
  drop_dangling();
  if (!check_deps()) return std::move(out_);
  std::vector<std::uint32_t> write;
  write.reserve(order_.size());
  for (const std::uint32_t i : order_) {
    if (kept_[i]) write.push_back(i);
  }
  std::sort(write.begin(), write.end(),
            [this](std::uint32_t a, std::uint32_t b) { return nodes_[a].id < nodes_[b].id; });
  out_.nodes.reserve(write.size());
  for (const std::uint32_t i : write) out_.nodes.push_back(std::move(graph_[i]));
  out_.stats.written = out_.nodes.size();
  out_.ok = true;
  return std::move(out_);
}

}  // namespace

ChakraGraph build_chakra_graph(const EtPlus& trace, NodeEncoder& encoder) {
  GraphBuilder builder(trace, encoder);
  return builder.run();
}

}  // namespace chakrashim::tools::convert
