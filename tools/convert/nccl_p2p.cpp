#include "convert/nccl_p2p.h"

#include <algorithm>
#include <limits>
#include <map>
#include <string>
#include <unordered_map>

#include "convert/node_rules.h"
#include "convert/p2p_ranks.h"

namespace chakrashim::tools::convert {

namespace {

constexpr std::uint32_t kNoNode = std::numeric_limits<std::uint32_t>::max();

struct Message : P2pMessage {
  std::string pg_name;
};

class NcclMessages {
 public:
  NcclMessages(const EtPlus& trace, const std::unordered_map<std::uint64_t, std::uint32_t>& index,
               ChakraGraph& graph, NodeEncoder& encoder, SimReadyStats& stats)
      : nodes_(trace.nodes), index_(index), graph_(graph), encoder_(encoder), stats_(stats) {}

  bool run(std::optional<std::uint64_t> rank, const std::vector<ProcessGroup>& groups);

 private:
  std::uint32_t parent_of(std::uint32_t i) const {
    if (!nodes_[i].parent) return kNoNode;
    const auto it = index_.find(*nodes_[i].parent);
    return it == index_.end() || it->second == i ? kNoNode : it->second;
  }
  // The first ancestor that is a host point-to-point op, or kNoNode.
  std::uint32_t issuing_op(std::uint32_t kernel) const;
  std::uint32_t thread_of(std::uint32_t i) const;
  // The ops each kernel (graph position) carries, in time order.
  std::map<std::size_t, std::vector<std::uint32_t>> carried(const std::vector<std::size_t>& kernels);
  std::optional<Message> message(std::uint32_t op, const EtPlusNode& kernel, std::uint64_t rank,
                                 const std::vector<ProcessGroup>& groups, std::string& why) const;
  // The kernel at graph position k written as GPU compute; `ops` the
  // point-to-point ops it carried, counted as left unmapped.
  void unmapped(std::size_t k, const std::string& why, std::size_t ops);
  // Each message's time as the job measured it (its kernel's), for the
  // network fit (network_fit.h).
  void samples(const std::map<std::size_t, std::vector<Message>>& mapped);
  // Orders each message as it ran against the GPU's other work (below).
  void order_as_ran(const std::map<std::size_t, std::vector<Message>>& mapped);
  // The graph's count of sends or receives, which the converter made one
  // a kernel.
  std::uint64_t& counted(NodeKind kind) {
    return kind == NodeKind::comm_send ? graph_.stats.sends : graph_.stats.receives;
  }

  const std::vector<EtPlusNode>& nodes_;
  const std::unordered_map<std::uint64_t, std::uint32_t>& index_;  // node id -> its position in nodes_
  ChakraGraph& graph_;
  NodeEncoder& encoder_;
  SimReadyStats& stats_;
};

std::uint32_t NcclMessages::issuing_op(std::uint32_t kernel) const {
  std::uint32_t p = parent_of(kernel);
  for (std::size_t hops = 0; p != kNoNode && hops < 64; ++hops, p = parent_of(p)) {
    if (!nodes_[p].gpu && host_p2p_kind(nodes_[p].name)) return p;
    if (is_root_name(nodes_[p].name)) break;
  }
  return kNoNode;
}

std::uint32_t NcclMessages::thread_of(std::uint32_t i) const {
  std::uint32_t p = i;
  for (std::size_t hops = 0; p != kNoNode && hops <= nodes_.size(); ++hops, p = parent_of(p)) {
    if (is_root_name(nodes_[p].name)) return p;
  }
  return kNoNode;
}

std::map<std::size_t, std::vector<std::uint32_t>> NcclMessages::carried(const std::vector<std::size_t>& kernels) {
  // Per host thread, in time order: its point-to-point ops, and every
  // SendRecv kernel at its launcher's start, whatever the converter's rule
  // made of it. A kernel carries the ops since the thread's last one: its
  // own op (send, recv), or a batch_isend_irecv group, all of whose ops
  // began before the launch. Ops that reach a kernel that is not theirs
  // (one the link hung under another op, which the converter then wrote as
  // an all-to-all), or no kernel before the window's end, are not guessed
  // at: counted as unmapped, never handed to the next group.
  struct Event {
    std::int64_t ts;
    int kernel;  // ops first at one time: a kernel is launched after its op began
    std::uint32_t node;
  };
  std::unordered_map<std::uint32_t, std::size_t> ours;  // kernel's node -> graph position
  for (const std::size_t k : kernels) ours.emplace(graph_.nodes[k].index, k);
  std::map<std::uint32_t, std::vector<Event>> threads;
  for (std::uint32_t i = 0; i < nodes_.size(); ++i) {
    const EtPlusNode& n = nodes_[i];
    if (!n.gpu && n.timed && host_p2p_kind(n.name)) threads[thread_of(i)].push_back({n.ts_ns, 0, i});
  }
  std::map<std::size_t, std::vector<std::uint32_t>> out;
  for (const ChakraNode& c : graph_.nodes) {
    if (c.id || !nodes_[c.index].gpu || !is_send_recv_kernel(nodes_[c.index].name)) continue;
    const std::uint32_t launcher = parent_of(c.index);
    if (launcher != kNoNode && nodes_[launcher].timed) {
      threads[thread_of(launcher)].push_back({nodes_[launcher].ts_ns, 1, c.index});
      continue;
    }
    const auto k = ours.find(c.index);
    if (k == ours.end()) continue;
    const std::uint32_t op = issuing_op(c.index);
    if (op == kNoNode) unmapped(k->second, "no c10d::send or c10d::recv_ above it in the ET", 1);
    else out[k->second] = {op};  // untimed: its own op alone
  }
  const auto drop = [this](const std::vector<std::uint32_t>& ops, const char* why) {
    if (ops.empty()) return;
    if (stats_.p2p_unmapped == 0) {
      stats_.p2p_unmapped_why = "node " + std::to_string(nodes_[ops[0]].id) + " (" + nodes_[ops[0]].name + "): " + why;
    }
    stats_.p2p_unmapped += ops.size();
  };
  for (auto& [thread, events] : threads) {
    std::stable_sort(events.begin(), events.end(), [](const Event& a, const Event& b) {
      return a.ts != b.ts ? a.ts < b.ts : a.kernel < b.kernel;
    });
    std::vector<std::uint32_t> pending;
    for (const Event& e : events) {
      if (!e.kernel) {
        pending.push_back(e.node);
        continue;
      }
      const auto k = ours.find(e.node);
      if (k == ours.end()) {
        drop(pending, "the NCCL kernel launched after it was not found under it or its group (the converter wrote it "
                      "as another kind)");
        pending.clear();
        continue;
      }
      const std::uint32_t op = issuing_op(e.node);
      const auto at = std::find(pending.begin(), pending.end(), op);
      if (op == kNoNode || at == pending.end()) {
        unmapped(k->second,
                 op == kNoNode ? "no c10d::send or c10d::recv_ above it in the ET"
                               : "its op " + std::to_string(nodes_[op].id) + " (" + nodes_[op].name +
                                     ") was taken by another kernel",
                 1);
        drop(pending, "the NCCL kernel launched after it could not be told");
        pending.clear();
        continue;
      }
      out[k->second].assign(pending.begin(), at + 1);
      pending.erase(pending.begin(), at + 1);
    }
    drop(pending, "no NCCL kernel of its own or of its group in the window");
  }
  return out;
}

std::optional<Message> NcclMessages::message(std::uint32_t op, const EtPlusNode& kernel, std::uint64_t rank,
                                             const std::vector<ProcessGroup>& groups, std::string& why) const {
  const EtPlusNode& n = nodes_[op];
  Message m;
  // The host op names its group where chakrashim recorded it; the kernel,
  // where Kineto copied "Process Group Name" from record_param_comms.
  m.pg_name = n.pg_name.empty() ? kernel.pg_name : n.pg_name;
  const auto p2p = p2p_message(n, m.pg_name, rank, groups, why);
  if (!p2p) {
    why = "node " + std::to_string(n.id) + " (" + n.name + "): " + why;
    return std::nullopt;
  }
  static_cast<P2pMessage&>(m) = *p2p;
  return m;
}

void NcclMessages::unmapped(std::size_t k, const std::string& why, std::size_t ops) {
  ChakraNode& c = graph_.nodes[k];
  --counted(c.kind);
  c.kind = NodeKind::comp;  // on the GPU still: its tail says is_cpu_op false
  c.comm.clear();
  if (stats_.p2p_unmapped == 0) {
    const EtPlusNode& n = nodes_[c.index];
    stats_.p2p_unmapped_why = "kernel " + std::to_string(n.id) + " (" + n.name + "): " + why;
  }
  stats_.p2p_unmapped += ops;
}

bool NcclMessages::run(std::optional<std::uint64_t> rank, const std::vector<ProcessGroup>& groups) {
  std::vector<std::size_t> kernels;
  for (std::size_t k = 0; k < graph_.nodes.size(); ++k) {
    const ChakraNode& c = graph_.nodes[k];
    if ((c.kind == NodeKind::comm_send || c.kind == NodeKind::comm_recv) && nodes_[c.index].gpu &&
        is_send_recv_kernel(nodes_[c.index].name))
      kernels.push_back(k);
  }
  if (kernels.empty()) return true;
  const auto carrying = carried(kernels);
  if (!rank) {
    for (const auto& [k, ops] : carrying) unmapped(k, "the file's rank is not known", ops.size());
    return true;
  }
  // Each kernel's messages, where every op it carries can be told.
  std::map<std::size_t, std::vector<Message>> mapped;
  for (const auto& [k, ops] : carrying) {
    const EtPlusNode& kernel = nodes_[graph_.nodes[k].index];
    std::vector<Message> messages;
    std::string why;
    for (const std::uint32_t op : ops) {
      auto m = message(op, kernel, *rank, groups, why);
      if (!m) break;
      messages.push_back(std::move(*m));
    }
    if (messages.size() != ops.size()) unmapped(k, why, ops.size());
    else mapped.emplace(k, std::move(messages));
  }
  order_as_ran(mapped);
  std::uint64_t next_id = 0;
  for (const EtPlusNode& n : nodes_) next_id = std::max(next_id, n.id + 1);
  for (const ChakraNode& c : graph_.nodes) {
    if (c.id) next_id = std::max(next_id, *c.id + 1);
  }
  // Kernel id -> the ids of its copies, for the deps on it.
  std::unordered_map<std::uint64_t, std::vector<std::uint64_t>> copies;
  std::vector<ChakraNode> added;
  samples(mapped);
  for (const auto& [k, messages] : mapped) {
    const EtPlusNode& kernel = nodes_[graph_.nodes[k].index];
    std::string tail = graph_.nodes[k].tail.empty() ? encoder_.device_tail(kernel.tail) : graph_.nodes[k].tail;
    if (tail.empty()) {
      graph_.error = "node " + std::to_string(kernel.id) + " (" + kernel.name + "): its attributes do not parse";
      return false;
    }
    --counted(graph_.nodes[k].kind);
    if (messages.size() > 1) {
      ++stats_.nccl_group_kernels;
      stats_.nccl_group_messages += messages.size();
    }
    for (std::size_t i = 0; i < messages.size(); ++i) {
      const Message& m = messages[i];
      ChakraNode c = graph_.nodes[k];
      c.kind = m.kind;
      c.comm = encoder_.p2p(m.bytes, m.ends.src, m.ends.dst, m.tag, m.pg_name);
      c.tail = tail;
      ++counted(m.kind);
      stats_.count_message(m);
      if (i == 0) {
        graph_.nodes[k] = std::move(c);
        continue;
      }
      c.id = next_id++;
      copies[kernel.id].push_back(*c.id);
      added.push_back(std::move(c));
    }
  }
  if (copies.empty()) return true;
  const auto on_copies_too = [&copies](ChakraNode& c) {
    const std::size_t n = c.data_deps.size();
    for (std::size_t d = 0; d < n; ++d) {
      const auto it = copies.find(c.data_deps[d]);
      if (it != copies.end()) c.data_deps.insert(c.data_deps.end(), it->second.begin(), it->second.end());
    }
  };
  for (ChakraNode& c : graph_.nodes) on_copies_too(c);
  for (ChakraNode& c : added) on_copies_too(c);  // a group's kernel after another's
  // Their ids follow every other: the nodes stay in id order.
  graph_.stats.written += added.size();
  for (ChakraNode& c : added) graph_.nodes.push_back(std::move(c));
  return true;
}

void NcclMessages::samples(const std::map<std::size_t, std::vector<Message>>& mapped) {
  // Keyed as the host messages are (sim_ready.cpp comm_samples): the same
  // message on both ranks has the same key.
  //
  // A batch group's kernel took its time for all of its messages, which
  // went out together, as the simulator sends them (the copies have the
  // same dependencies): there the group takes as long as its largest
  // message. So a group is one sample, its largest message against the
  // kernel's time; each of its messages with the kernel's whole time
  // fitted the network to the group's slowest, a smaller message looking
  // as slow as the largest. Its key names every message, sorted: both
  // ranks' kernels of one group carry the same messages.
  std::vector<std::size_t> order;
  for (const auto& [k, messages] : mapped) {
    if (nodes_[graph_.nodes[k].index].timed) order.push_back(k);
  }
  std::stable_sort(order.begin(), order.end(), [this](std::size_t a, std::size_t b) {
    return nodes_[graph_.nodes[a].index].ts_ns < nodes_[graph_.nodes[b].index].ts_ns;
  });
  std::map<std::string, std::uint64_t> ordinal;
  for (const std::size_t k : order) {
    const EtPlusNode& kernel = nodes_[graph_.nodes[k].index];
    const std::vector<Message>& messages = mapped.at(k);
    CommSample s;
    s.shape = CommShape::p2p;
    s.took_ns = kernel.inclusive_ns;
    std::vector<std::string> keys;
    for (const Message& m : messages) {
      s.bytes = std::max(s.bytes, m.bytes);
      keys.push_back(p2p_sample_key(m.ends.src, m.ends.dst, m.tag, m.bytes));
    }
    if (keys.empty()) continue;
    std::sort(keys.begin(), keys.end());
    std::string key = keys.front();
    if (keys.size() > 1) {
      key = "p2p group [" + keys.front();
      for (std::size_t i = 1; i < keys.size(); ++i) key += "; " + keys[i];
      key += "]";
    }
    key += " #" + std::to_string(ordinal[key]++);
    if (s.took_ns > 0) stats_.comm_samples[key] = s;
  }
}

void NcclMessages::order_as_ran(const std::map<std::size_t, std::vector<Message>>& mapped) {
  // The GPU nodes written, per stream, by start.
  std::map<std::int64_t, std::vector<std::size_t>> streams;
  for (std::size_t k = 0; k < graph_.nodes.size(); ++k) {
    const EtPlusNode& n = nodes_[graph_.nodes[k].index];
    if (n.gpu && n.timed) streams[n.stream.value_or(0)].push_back(k);
  }
  const auto start = [this](std::size_t k) { return nodes_[graph_.nodes[k].index].ts_ns; };
  const auto end = [this](std::size_t k) {
    const EtPlusNode& n = nodes_[graph_.nodes[k].index];
    return n.ts_ns + n.inclusive_ns;
  };
  for (auto& [stream, list] : streams) {
    std::stable_sort(list.begin(), list.end(), [&](std::size_t a, std::size_t b) { return start(a) < start(b); });
  }
  const auto add_dep = [this](std::size_t on, std::size_t k) {
    std::vector<std::uint64_t>& deps = graph_.nodes[k].data_deps;
    const std::uint64_t id = nodes_[graph_.nodes[on].index].id;
    if (std::find(deps.begin(), deps.end(), id) == deps.end()) deps.push_back(id);
  };
  for (const auto& [k, messages] : mapped) {
    const EtPlusNode& kernel = nodes_[graph_.nodes[k].index];
    if (!kernel.timed) continue;
    const bool receives = std::any_of(messages.begin(), messages.end(),
                                      [](const Message& m) { return m.kind == NodeKind::comm_recv; });
    for (const auto& [stream, list] : streams) {
      // The last node of the stream that ended before the message began:
      // the work it waited for (its data, on the compute stream). A
      // stream runs one node at a time, so at most the one running then is
      // passed over (a few steps, bounded: the pass stays O(log n) a
      // message on captures of millions of kernels).
      auto at = std::lower_bound(list.begin(), list.end(), kernel.ts_ns,
                                 [&](std::size_t j, std::int64_t ts) { return start(j) < ts; });
      for (int steps = 0; at != list.begin() && steps < 4; ++steps) {
        const std::size_t j = *--at;
        if (j == k || end(j) > kernel.ts_ns) continue;
        add_dep(j, k);
        break;
      }
      if (!receives) continue;
      // The first that began after it ended: the work that waited for
      // what it received.
      // Strictly after it by (start, position), so that two receives of no
      // time at one instant do not wait for each other.
      auto after = std::lower_bound(list.begin(), list.end(), end(k),
                                    [&](std::size_t j, std::int64_t ts) { return start(j) < ts; });
      while (after != list.end() && start(*after) == kernel.ts_ns && *after <= k) ++after;
      if (after != list.end()) add_dep(k, *after);
    }
  }
}

}  // namespace

bool nccl_point_to_point(const EtPlus& trace, const std::unordered_map<std::uint64_t, std::uint32_t>& index,
                         ChakraGraph& graph, NodeEncoder& encoder, std::optional<std::uint64_t> rank,
                         const std::vector<ProcessGroup>& groups, SimReadyStats& stats) {
  NcclMessages pass(trace, index, graph, encoder, stats);
  return pass.run(rank, groups);
}

}  // namespace chakrashim::tools::convert
