#include "convert/linked_join.h"

#include <utility>

namespace chakrashim::tools::convert {

namespace {

// Link writes nanoseconds as microseconds with three decimals
// (common/time_text.h us_text) and the reader takes Python's int() of them:
// truncation toward zero, as C++'s division does.
std::int64_t micros_truncated(std::int64_t ns) { return ns / 1000; }

}  // namespace

std::optional<EtPlus> join_linked(HostEtRead& host, const link::LinkPlan& plan, const link::DeviceOps& device,
                                  NodeEncoder& encoder) {
  if (!host.ok || !host.ordinary || host.nodes.size() != plan.nodes.size()) return std::nullopt;
  EtPlus out;
  out.meta = host.meta;
  std::size_t total = host.nodes.size();
  for (const auto& n : plan.nodes) total += n.children;
  out.nodes.reserve(total);
  std::uint64_t linked = 0;  // nodes the reader counts as linked
  // write_order names the nodes written, left-out ones not (a plan made
  // by hand in file order may leave it empty).
  const bool all_in_file_order = plan.in_file_order && plan.write_order.empty();
  const std::size_t count = all_in_file_order ? host.nodes.size() : plan.write_order.size();
  for (std::size_t i = 0; i < count; ++i) {
    const std::size_t index = all_in_file_order ? i : plan.write_order[i];
    const link::LinkedNode& ln = plan.nodes[index];
    if (ln.dropped) continue;
    HostEtNode& h = host.nodes[index];
    EtPlusNode node = std::move(h.node);
    node.id = ln.new_id;
    if (ln.new_parent) node.parent = *ln.new_parent;
    if (ln.timing) {
      const link::NodeTiming& t = plan.timings[*ln.timing];
      node.exclusive_dur = micros_truncated(t.exclusive);
      if (node.exclusive_dur < 0) return std::nullopt;
      node.inter_thread_dep = t.inter_thread_dep.value_or(0);
      node.timed = true;
      node.ts_ns = t.ts;
      node.inclusive_ns = t.inclusive;
      node.exclusive_ns = t.exclusive;
      ++linked;
    }
    node.tail = encoder.tail(h.tail);
    // What the children copy of their host node, before it moves.
    const std::uint64_t dep = node.inter_thread_dep;
    const std::optional<std::int64_t> comm_size = node.comm_size;
    const std::string pg_name = node.pg_name;
    out.nodes.push_back(std::move(node));
    if (ln.children == 0) continue;
    TailFields tail = std::move(h.tail);
    tail.is_cpu_op = false;
    for (std::uint32_t c = 0; c < ln.children; ++c) {
      const link::GpuOp& g = device.gpu[plan.child_ops[ln.first_child + c]];
      EtPlusNode child;
      child.id = ln.new_id + 1 + c;
      child.parent = ln.new_id;
      child.name = std::string(device.names.at(g.name));
      child.gpu = true;
      child.exclusive_dur = micros_truncated(g.dur);
      if (child.exclusive_dur < 0) return std::nullopt;
      child.inter_thread_dep = dep;
      child.timed = true;
      child.ts_ns = g.ts;
      child.inclusive_ns = child.exclusive_ns = g.dur;
      child.comm_size = comm_size;
      const bool with_pg = g.pg_name && child.name.find("ncclDevKernel") != std::string::npos;
      child.pg_name = with_pg ? std::string(device.names.at(*g.pg_name)) : pg_name;
      tail.stream = g.stream;
      child.stream = tail.stream;
      child.tail = encoder.tail(tail);
      out.nodes.push_back(std::move(child));
      ++linked;
    }
  }
  host.nodes = {};
  if (!out.nodes.empty() && linked == 0) return std::nullopt;
  return out;
}

}  // namespace chakrashim::tools::convert
