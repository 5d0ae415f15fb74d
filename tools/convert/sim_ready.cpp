#include "convert/sim_ready.h"

#include <algorithm>
#include <array>
#include <map>
#include <string>
#include <limits>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "convert/comm_groups.h"
#include "convert/nccl_p2p.h"
#include "convert/node_rules.h"
#include "convert/p2p_ranks.h"

namespace chakrashim::tools::convert {

namespace {

constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();

// Intervals sorted and merged where they overlap or touch.
std::vector<std::pair<std::int64_t, std::int64_t>> merged(std::vector<std::pair<std::int64_t, std::int64_t>> v) {
  std::sort(v.begin(), v.end());
  std::vector<std::pair<std::int64_t, std::int64_t>> out;
  for (const auto& [a, b] : v) {
    if (!out.empty() && a <= out.back().second) out.back().second = std::max(out.back().second, b);
    else out.emplace_back(a, b);
  }
  return out;
}

// How much of [from, to) the merged intervals cover.
std::int64_t overlap(const std::vector<std::pair<std::int64_t, std::int64_t>>& merged_intervals, std::int64_t from,
                     std::int64_t to) {
  std::int64_t covered = 0;
  for (const auto& [a, b] : merged_intervals) {
    if (a >= to) break;
    covered += std::max<std::int64_t>(0, std::min(b, to) - std::max(a, from));
  }
  return covered;
}

class SimReady {
 public:
  SimReady(const EtPlus& trace, ChakraGraph& graph, NodeEncoder& encoder, SimReadyStats& stats)
      : nodes_(trace.nodes), graph_(graph), encoder_(encoder), stats_(stats) {
    index_.reserve(nodes_.size());
    for (std::uint32_t i = 0; i < nodes_.size(); ++i) index_.emplace(nodes_[i].id, i);
  }

  void drop_missing_ctrl_deps();
  void metadata_as_compute();
  bool host_collectives(std::optional<std::uint64_t> rank);
  // NCCL's send/recv kernels as messages (nccl_p2p.h).
  bool nccl_messages(const EtPlus& trace, std::optional<std::uint64_t> rank) {
    return nccl_point_to_point(trace, index_, graph_, encoder_, rank, groups_, stats_);
  }
  void timeline(std::int64_t op_cost_ns);
  void end_on_compute();  // 4. (sim_ready.h)
  // The NCCL collectives' kernel times, for the network fit (network_fit.h).
  void gpu_comm_samples();
  // A collective's sample: its shape and ring size set in `s`, and its key
  // (the same on every rank, before its ordinal); "" for a type the fit has
  // no time model for.
  std::string collective_sample(std::optional<CollKind> type, const std::string& pg_name, CommSample& s) const;
  void comm_samples();

 private:
  using Extra = std::unordered_map<std::uint32_t, std::int64_t>;
  std::unordered_map<std::uint32_t, std::vector<ChakraNode*>> host_threads();
  // Also returns the spans (merged) while the thread's asynchronous
  // communication was outstanding.
  std::vector<std::pair<std::int64_t, std::int64_t>> add_gaps(std::uint32_t root, const std::vector<ChakraNode*>& list,
                                                             Extra& extra);
  void take_costs(std::uint32_t root, const std::vector<ChakraNode*>& list, std::int64_t op_cost_ns, Extra& extra);
  std::uint32_t find(std::uint64_t id) const {
    const auto it = index_.find(id);
    return it == index_.end() ? kNone : it->second;
  }
  std::uint32_t parent_of(std::uint32_t i) const { return nodes_[i].parent ? find(*nodes_[i].parent) : kNone; }
  std::uint32_t thread_root(std::uint32_t i, std::vector<std::uint32_t>& memo) const;
  // The parent an op ran under: its ET parent, past async work records.
  std::uint32_t run_parent(std::uint32_t i) const;
  // A c10d::send or recv_ as a COMM_SEND / COMM_RECV node, if its peer's
  // global rank can be told; false only when its attributes do not parse.
  bool point_to_point(ChakraNode& c, const EtPlusNode& n, std::uint64_t rank,
                      const std::vector<ProcessGroup>& groups);
  std::vector<ProcessGroup> process_groups() const;
  // The ends and tag of each point-to-point node written (by node index).
  std::unordered_map<std::uint32_t, std::array<std::int64_t, 3>> p2p_ends_;
  std::vector<ProcessGroup> groups_;

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

std::vector<ProcessGroup> SimReady::process_groups() const {
  for (const EtPlusNode& n : nodes_) {
    if (!is_metadata_name(n.name)) continue;
    if (auto groups = process_groups_of(inputs_values_of(n.tail))) return *groups;
  }
  return {};
}

bool SimReady::point_to_point(ChakraNode& c, const EtPlusNode& n, std::uint64_t rank,
                              const std::vector<ProcessGroup>& groups) {
  std::string why;
  const auto m = p2p_message(n, n.pg_name, rank, groups, why);
  if (!m) {
    if (stats_.p2p_unmapped++ == 0) stats_.p2p_unmapped_why = "node " + std::to_string(n.id) + " (" + n.name + "): " + why;
    return true;
  }
  std::string tail = encoder_.device_tail(n.tail);
  if (tail.empty()) {
    graph_.error = "node " + std::to_string(n.id) + " (" + n.name + "): its attributes do not parse";
    return false;
  }
  p2p_ends_[c.index] = {static_cast<std::int64_t>(m->ends.src), static_cast<std::int64_t>(m->ends.dst), m->tag};
  c.kind = m->kind;
  c.comm = encoder_.p2p(m->bytes, m->ends.src, m->ends.dst, m->tag, n.pg_name);
  c.tail = std::move(tail);
  ++(m->kind == NodeKind::comm_send ? graph_.stats.sends : graph_.stats.receives);
  stats_.count_message(*m);
  return true;
}

bool SimReady::host_collectives(std::optional<std::uint64_t> rank) {
  // NCCL kernels already are the rank's communication: its c10d ops are
  // only their launchers then.
  groups_ = process_groups();
  const GraphStats& s = graph_.stats;
  if (s.collectives + s.sends + s.receives > 0) return true;
  const std::vector<ProcessGroup>& groups = groups_;
  for (ChakraNode& c : graph_.nodes) {
    const EtPlusNode& n = nodes_[c.index];
    if (c.kind != NodeKind::comp || n.gpu) continue;
    if (host_p2p_kind(n.name)) {
      if (!rank) {
        if (stats_.p2p_unmapped++ == 0) stats_.p2p_unmapped_why = "the file's rank is not known";
      } else if (!point_to_point(c, n, *rank, groups)) {
        return false;
      }
      continue;
    }
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
    if (n.pg_name.empty()) ++stats_.unnamed_collectives;
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

std::unordered_map<std::uint32_t, std::vector<ChakraNode*>> SimReady::host_threads() {
  // The host nodes written, per thread root, in id order (graph order): the
  // walk order that chains them by data deps.
  std::vector<std::uint32_t> memo(nodes_.size(), kNone - 1);  // kNone - 1: not known yet
  std::unordered_map<std::uint32_t, std::vector<ChakraNode*>> threads;
  for (ChakraNode& c : graph_.nodes) {
    if (nodes_[c.index].gpu) continue;
    const std::uint32_t root = thread_root(c.index, memo);
    if (root != kNone) threads[root].push_back(&c);
  }
  return threads;
}

std::uint32_t SimReady::run_parent(std::uint32_t i) const {
  // Async work records (is_async_work_name) are passed over: ops the thread
  // ran while one was open nest under it in the ET, but ran under whichever
  // op of the thread was open then: the nearest ancestor past the record
  // whose span holds the op's start (the thread root if none does).
  const EtPlusNode& n = nodes_[i];
  std::uint32_t p = parent_of(i);
  bool past_async = false;
  for (std::size_t hops = 0; p != kNone && hops <= nodes_.size(); ++hops) {
    const EtPlusNode& q = nodes_[p];
    if (is_async_work_name(q.name)) {
      past_async = true;
    } else if (!past_async || is_root_name(q.name) || !n.timed || !q.timed || n.ts_ns < q.ts_ns + q.inclusive_ns) {
      return p;
    }
    p = parent_of(p);
  }
  return p;
}

std::vector<std::pair<std::int64_t, std::int64_t>> SimReady::add_gaps(std::uint32_t root,
                                                                       const std::vector<ChakraNode*>& list,
                                                                       Extra& extra) {
  // The gap before a top-level op: from the latest end of the top-level ops
  // before it (by start) to its start; none before the first. Time in a gap
  // while asynchronous communication this thread issued was outstanding is
  // the thread waiting for it: the comm node the simulator runs stands for
  // it, so it is not folded in too (issue #50: a gloo DDP rank simulated to
  // twice its window, each all-reduce counted as compute and again as a
  // collective).
  std::vector<const EtPlusNode*> top;
  std::vector<std::pair<std::int64_t, std::int64_t>> outstanding;
  for (const ChakraNode* c : list) {
    const EtPlusNode& n = nodes_[c->index];
    if (!n.timed) continue;
    if (is_async_work_name(n.name)) {
      // Not a send's: the simulator does not hold a sender until its
      // receiver is there, as gloo does, so the sender's wait stays.
      if (n.name.find(":send") == std::string::npos) outstanding.emplace_back(n.ts_ns, n.ts_ns + n.inclusive_ns);
    }
    else if (run_parent(c->index) == root) top.push_back(&n);
  }
  std::stable_sort(top.begin(), top.end(), [](const EtPlusNode* a, const EtPlusNode* b) { return a->ts_ns < b->ts_ns; });
  const auto waiting = merged(std::move(outstanding));
  std::int64_t end = 0;  // the latest end so far
  for (std::size_t k = 0; k < top.size(); ++k) {
    const EtPlusNode& n = *top[k];
    if (k > 0 && n.ts_ns > end) {
      const std::int64_t wait = overlap(waiting, end, n.ts_ns);
      const std::int64_t gap = n.ts_ns - end - wait;
      extra[static_cast<std::uint32_t>(&n - nodes_.data())] += gap;
      stats_.gap_ns += static_cast<std::uint64_t>(gap);
      stats_.comm_wait_ns += static_cast<std::uint64_t>(wait);
    }
    end = k == 0 ? n.ts_ns + n.inclusive_ns : std::max(end, n.ts_ns + n.inclusive_ns);
  }
  return waiting;
}

void SimReady::take_costs(std::uint32_t root, const std::vector<ChakraNode*>& list, std::int64_t op_cost_ns,
                          Extra& extra) {
  // Each timed op's recording cost, taken where it lands: its parent's
  // exclusive time, or the gap before it for a top-level op.
  for (const ChakraNode* c : list) {
    if (!nodes_[c->index].timed) continue;
    const std::uint32_t p = parent_of(c->index);
    extra[p == root ? c->index : p] -= op_cost_ns;
    stats_.cost_ns += static_cast<std::uint64_t>(op_cost_ns);
  }
}

void SimReady::timeline(std::int64_t op_cost_ns) {
  for (auto& [root, list] : host_threads()) {
    Extra extra;  // node index -> ns before its own time (gap less costs)
    const auto waiting = add_gaps(root, list, extra);
    if (op_cost_ns > 0) take_costs(root, list, op_cost_ns, extra);
    // A comm node's time is the network's: what lands on one goes to the
    // next host node instead.
    MicrosCarry carry;
    std::int64_t pending = 0;
    for (ChakraNode* c : list) {
      const EtPlusNode& n = nodes_[c->index];
      if (const auto e = extra.find(c->index); e != extra.end()) pending += e->second;
      // Comm nodes' time is the network's; an async work record's span is
      // the communication's (add_gaps): neither is compute.
      if (c->kind == NodeKind::comm_coll || c->kind == NodeKind::comm_send || c->kind == NodeKind::comm_recv)
        continue;
      if (is_async_work_name(n.name)) {
        c->duration = 0;
        ++stats_.async_records;
        continue;
      }
      std::int64_t own = n.timed ? std::max<std::int64_t>(n.exclusive_ns, 0) : 0;
      if (n.timed && is_comm_wait_name(n.name)) {
        // Waiting for a collective (functional collectives' wait_tensor):
        // the comm node stands for it, as for a gap while it was out.
        const std::int64_t wait = std::min(own, overlap(waiting, n.ts_ns, n.ts_ns + n.inclusive_ns));
        own -= wait;
        stats_.comm_wait_ns += static_cast<std::uint64_t>(wait);
      }
      c->duration = carry.add(own + pending);
      pending = 0;
    }
    ++stats_.threads;
  }
}

void SimReady::comm_samples() {
  // Per thread: each async work record is the backend's side of the comm
  // node issued last before it started (its ET parent, as a rule).
  std::map<std::string, std::uint64_t> ordinal;
  for (auto& [root, list] : host_threads()) {
    std::vector<const ChakraNode*> comm;
    std::vector<std::uint32_t> async;
    for (const ChakraNode* c : list) {
      const EtPlusNode& n = nodes_[c->index];
      if (!n.timed) continue;
      if (c->kind == NodeKind::comm_coll || c->kind == NodeKind::comm_send || c->kind == NodeKind::comm_recv)
        comm.push_back(c);
      else if (is_async_work_name(n.name))
        async.push_back(c->index);
    }
    const auto by_ts = [this](const ChakraNode* a, const ChakraNode* b) {
      return nodes_[a->index].ts_ns < nodes_[b->index].ts_ns;
    };
    std::stable_sort(comm.begin(), comm.end(), by_ts);
    std::vector<std::int64_t> took(comm.size(), 0);
    for (const std::uint32_t a : async) {
      const std::int64_t ts = nodes_[a].ts_ns;
      auto it = std::upper_bound(comm.begin(), comm.end(), ts,
                                 [this](std::int64_t t, const ChakraNode* c) { return t < nodes_[c->index].ts_ns; });
      if (it == comm.begin()) continue;
      const std::size_t k = static_cast<std::size_t>(it - comm.begin()) - 1;
      if (took[k] == 0) took[k] = nodes_[a].inclusive_ns;
    }
    for (std::size_t k = 0; k < comm.size(); ++k) {
      const ChakraNode& c = *comm[k];
      const EtPlusNode& n = nodes_[c.index];
      CommSample s;
      s.bytes = n.comm_size.value_or(0);
      s.took_ns = took[k];
      std::string key;
      if (c.kind == NodeKind::comm_coll) {
        key = collective_sample(host_collective_kind(n.name), n.pg_name, s);
        if (key.empty()) continue;
      } else {
        const auto e = p2p_ends_.find(c.index);
        if (e == p2p_ends_.end()) continue;
        s.shape = CommShape::p2p;
        key = p2p_sample_key(static_cast<std::uint64_t>(e->second[0]), static_cast<std::uint64_t>(e->second[1]),
                             e->second[2], s.bytes);
      }
      key += " #" + std::to_string(ordinal[key]++);
      if (s.took_ns > 0) stats_.comm_samples[key] = s;
    }
  }
}

std::string SimReady::collective_sample(std::optional<CollKind> type, const std::string& pg_name,
                                         CommSample& s) const {
  if (!type || (*type != CollKind::all_reduce && *type != CollKind::all_gather && *type != CollKind::reduce_scatter))
    return {};  // no time model for it (network_fit.h)
  s.shape = *type == CollKind::all_reduce ? CommShape::all_reduce : CommShape::half_ring;
  s.npus = 0;
  for (const ProcessGroup& g : groups_)
    if (!pg_name.empty() && g.name == pg_name && !g.ranks.empty()) s.npus = g.ranks.size();
  return "coll " + pg_name + " " + std::to_string(static_cast<int>(*type));
}

void SimReady::gpu_comm_samples() {
  // An NCCL collective's kernel runs from the moment its stream reaches it
  // until the ring is done, the others' lateness included, as gloo's async
  // record does for the host's: its time is the sample. Keyed as the host
  // collectives are, in kernel start order (a rank's collectives of one
  // group run in one order on every rank). Send/recv kernels are sampled
  // by nccl_p2p.
  std::vector<const ChakraNode*> kernels;
  for (const ChakraNode& c : graph_.nodes) {
    const EtPlusNode& n = nodes_[c.index];
    if (c.kind == NodeKind::comm_coll && n.gpu && n.timed && !c.id) kernels.push_back(&c);
  }
  std::stable_sort(kernels.begin(), kernels.end(), [this](const ChakraNode* a, const ChakraNode* b) {
    return nodes_[a->index].ts_ns < nodes_[b->index].ts_ns;
  });
  std::map<std::string, std::uint64_t> ordinal;
  for (const ChakraNode* c : kernels) {
    const EtPlusNode& n = nodes_[c->index];
    CommSample s;
    s.bytes = n.comm_size.value_or(0);
    s.took_ns = n.inclusive_ns;
    std::string key = collective_sample(collective_kind(n.name), n.pg_name, s);
    if (key.empty()) continue;
    key += " #" + std::to_string(ordinal[key]++);
    if (s.took_ns > 0 && s.bytes > 0) stats_.comm_samples[key] = s;
  }
}

void SimReady::end_on_compute() {
  // GPU comm nodes only: a host comm node is in its thread's chain.
  const auto gpu_comm = [this](const ChakraNode& c) {
    return nodes_[c.index].gpu &&
           (c.kind == NodeKind::comm_coll || c.kind == NodeKind::comm_send || c.kind == NodeKind::comm_recv);
  };
  if (std::none_of(graph_.nodes.begin(), graph_.nodes.end(), gpu_comm)) return;
  std::unordered_set<std::uint64_t> waited_for;
  std::uint64_t next_id = 0;
  for (const ChakraNode& c : graph_.nodes) {
    waited_for.insert(c.data_deps.begin(), c.data_deps.end());
    if (c.ctrl_dep) waited_for.insert(*c.ctrl_dep);
    next_id = std::max(next_id, c.id.value_or(nodes_[c.index].id) + 1);
  }
  for (const EtPlusNode& n : nodes_) next_id = std::max(next_id, n.id + 1);
  ChakraNode done;
  for (const ChakraNode& c : graph_.nodes) {
    if (!gpu_comm(c)) continue;
    const std::uint64_t id = c.id.value_or(nodes_[c.index].id);
    if (waited_for.count(id)) continue;
    done.data_deps.push_back(id);
    // Any node's: the name, tail and time written are the node's own.
    done.index = c.index;
  }
  if (done.data_deps.empty()) return;
  TailFields tail;
  tail.is_cpu_op = false;
  done.id = next_id;
  done.comm_done = true;
  done.duration = 0;
  done.tail = encoder_.tail(tail);
  stats_.comm_sinks = done.data_deps.size();
  graph_.nodes.push_back(std::move(done));
  ++graph_.stats.written;
}

}  // namespace

std::string p2p_sample_key(std::uint64_t src, std::uint64_t dst, std::int64_t tag, std::int64_t bytes) {
  return "p2p " + std::to_string(src) + ">" + std::to_string(dst) + " tag " + std::to_string(tag) + " bytes " +
         std::to_string(bytes);
}

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
  if (!pass.host_collectives(options.rank) || !pass.nccl_messages(trace, options.rank)) {
    graph.ok = false;
    return false;
  }
  pass.comm_samples();
  pass.gpu_comm_samples();
  if (options.gaps) {
    pass.timeline(options.op_cost_ns);
    if (stats != nullptr && options.op_cost_ns > 0) {
      stats->op_cost_ns = options.op_cost_ns;
      stats->cost_from_capture = options.op_cost_from_capture;
      stats->cost_refused = options.op_cost_refused;
    }
  }
  pass.end_on_compute();  // last: the passes above read each node's ET+ node
  return true;
}

}  // namespace chakrashim::tools::convert
