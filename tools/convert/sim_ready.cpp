#include "convert/sim_ready.h"

#include <algorithm>
#include <limits>
#include <unordered_map>
#include <vector>

#include "convert/node_rules.h"

namespace chakrashim::tools::convert {

namespace {

constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();

class SimReady {
 public:
  SimReady(const EtPlus& trace, ChakraGraph& graph, NodeEncoder& encoder, SimReadyStats& stats)
      : nodes_(trace.nodes), graph_(graph), encoder_(encoder), stats_(stats) {
    index_.reserve(nodes_.size());
    for (std::uint32_t i = 0; i < nodes_.size(); ++i) index_.emplace(nodes_[i].id, i);
  }

  void drop_missing_ctrl_deps();
  void metadata_as_compute();
  bool host_collectives();
  void timeline(std::int64_t op_cost_ns);

 private:
  std::uint32_t find(std::uint64_t id) const {
    const auto it = index_.find(id);
    return it == index_.end() ? kNone : it->second;
  }
  std::uint32_t parent_of(std::uint32_t i) const { return nodes_[i].parent ? find(*nodes_[i].parent) : kNone; }
  std::uint32_t thread_root(std::uint32_t i, std::vector<std::uint32_t>& memo) const;

  const std::vector<EtPlusNode>& nodes_;
  ChakraGraph& graph_;
  NodeEncoder& encoder_;
  SimReadyStats& stats_;
  std::unordered_map<std::uint64_t, std::uint32_t> index_;
};

void SimReady::metadata_as_compute() {
  for (ChakraNode& c : graph_.nodes) {
    if (c.kind != NodeKind::metadata) continue;
    c.kind = NodeKind::comp;
    ++graph_.stats.metadata_as_comp;
  }
}

void SimReady::drop_missing_ctrl_deps() {
  std::vector<std::uint8_t> written(nodes_.size(), 0);
  for (const ChakraNode& c : graph_.nodes) written[c.index] = 1;
  for (ChakraNode& c : graph_.nodes) {
    if (!c.ctrl_dep) continue;
    const std::uint32_t k = find(*c.ctrl_dep);
    if (k != kNone && written[k]) continue;
    c.ctrl_dep.reset();
    ++graph_.stats.ctrl_deps_dropped;
  }
}

bool SimReady::host_collectives() {
  // NCCL kernels already are the rank's communication: its c10d ops are
  // only their launchers then.
  const GraphStats& s = graph_.stats;
  if (s.collectives + s.sends + s.receives > 0) return true;
  for (ChakraNode& c : graph_.nodes) {
    const EtPlusNode& n = nodes_[c.index];
    if (c.kind != NodeKind::comp || n.gpu) continue;
    const auto type = host_collective_kind(n.name);
    // No bytes, no collective to simulate (an empty bucket): left as compute.
    if (!type || !n.comm_size || *n.comm_size <= 0) continue;
    std::string tail = encoder_.device_tail(n.tail);
    if (tail.empty()) {
      graph_.error = "node " + std::to_string(n.id) + " (" + n.name + "): its attributes do not parse";
      return false;
    }
    c.kind = NodeKind::comm_coll;
    c.comm = encoder_.comm(type, *n.comm_size, n.pg_name);
    c.tail = std::move(tail);
    ++graph_.stats.collectives;
    ++graph_.stats.host_collectives;
    ++stats_.groups[n.pg_name.empty() ? std::string("0") : n.pg_name];
  }
  return true;
}

std::uint32_t SimReady::thread_root(std::uint32_t i, std::vector<std::uint32_t>& memo) const {
  // Up the parent chain to the first thread root; every node passed on the
  // way gets the answer, so each chain is walked once. A chain that loops
  // or ends without a root has none.
  std::vector<std::uint32_t> path;
  std::uint32_t cur = i, root = kNone;
  while (cur != kNone) {
    if (memo[cur] != kNone - 1) {
      root = memo[cur];
      break;
    }
    if (is_root_name(nodes_[cur].name)) {
      root = cur;
      break;
    }
    if (path.size() > nodes_.size()) break;
    path.push_back(cur);
    cur = parent_of(cur);
  }
  for (const std::uint32_t p : path) memo[p] = root;
  if (cur != kNone && memo[cur] == kNone - 1) memo[cur] = root;
  return root;
}

void SimReady::timeline(std::int64_t op_cost_ns) {
  std::vector<std::uint32_t> memo(nodes_.size(), kNone - 1);  // kNone - 1: not known yet
  // The host nodes written, per thread, in id order (graph order): the walk
  // order that chains them by data deps.
  std::unordered_map<std::uint32_t, std::vector<ChakraNode*>> threads;
  for (ChakraNode& c : graph_.nodes) {
    if (nodes_[c.index].gpu) continue;
    const std::uint32_t root = thread_root(c.index, memo);
    if (root != kNone) threads[root].push_back(&c);
  }
  for (auto& [root, list] : threads) {
    // The gap before a top-level op: from the latest end of the top-level
    // ops before it (by start) to its start; none before the first.
    std::vector<ChakraNode*> top;
    for (ChakraNode* c : list) {
      const EtPlusNode& n = nodes_[c->index];
      if (n.timed && parent_of(c->index) == root) top.push_back(c);
    }
    std::stable_sort(top.begin(), top.end(), [this](const ChakraNode* a, const ChakraNode* b) {
      return nodes_[a->index].ts_ns < nodes_[b->index].ts_ns;
    });
    std::unordered_map<const ChakraNode*, std::int64_t> gap;
    std::int64_t end = 0;
    bool first = true;
    for (const ChakraNode* c : top) {
      const EtPlusNode& n = nodes_[c->index];
      if (!first && n.ts_ns > end) {
        gap[c] = n.ts_ns - end;
        stats_.gap_ns += static_cast<std::uint64_t>(n.ts_ns - end);
      }
      end = first ? n.ts_ns + n.inclusive_ns : std::max(end, n.ts_ns + n.inclusive_ns);
      first = false;
    }
    // A comm node's time is the network's: a gap before one goes to the
    // next host node instead.
    // The recording cost of each timed op, charged where it lands: in its
    // parent's exclusive time, or in the gap before it for a top-level op.
    std::unordered_map<std::uint32_t, std::int64_t> charged;
    if (op_cost_ns > 0) {
      for (const ChakraNode* c : list) {
        if (!nodes_[c->index].timed) continue;
        const std::uint32_t p = parent_of(c->index);
        charged[p == root ? c->index : p] += op_cost_ns;
        stats_.cost_ns += static_cast<std::uint64_t>(op_cost_ns);
      }
    }
    MicrosCarry carry;
    std::int64_t pending = 0;
    for (ChakraNode* c : list) {
      const EtPlusNode& n = nodes_[c->index];
      if (const auto g = gap.find(c); g != gap.end()) pending += g->second;
      if (const auto k = charged.find(c->index); k != charged.end()) pending -= k->second;
      if (c->kind == NodeKind::comm_coll) continue;
      const std::int64_t ns = (n.timed ? std::max<std::int64_t>(n.exclusive_ns, 0) : 0) + pending;
      pending = 0;
      c->duration = carry.add(ns);
    }
    ++stats_.threads;
  }
}

}  // namespace

std::uint64_t MicrosCarry::add(std::int64_t ns) {
  total_ns_ += ns;
  const std::uint64_t reached = total_ns_ > 0 ? static_cast<std::uint64_t>((total_ns_ + 500) / 1000) : 0;
  const std::uint64_t out = reached > written_us_ ? reached - written_us_ : 0;
  written_us_ += out;
  return out;
}

bool make_sim_ready(const EtPlus& trace, ChakraGraph& graph, NodeEncoder& encoder, const ConvertOptions& options,
                    SimReadyStats* stats) {
  if (options.chakra_exact || !graph.ok) return graph.ok;
  SimReadyStats local;
  SimReady pass(trace, graph, encoder, stats ? *stats : local);
  pass.drop_missing_ctrl_deps();
  pass.metadata_as_compute();
  if (!pass.host_collectives()) {
    graph.ok = false;
    return false;
  }
  if (options.gaps) pass.timeline(options.op_cost_ns);
  return true;
}

}  // namespace chakrashim::tools::convert
