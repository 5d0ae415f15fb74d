#include "convert/p2p_ranks.h"

#include <limits>

#include "convert/node_rules.h"

namespace chakrashim::tools::convert {

namespace {

// Group ranks are global ranks in this group: every rank, or 0..n-1 in order.
bool numbers_ranks_as_world(const ProcessGroup& g) {
  for (std::size_t i = 0; i < g.ranks.size(); ++i)
    if (g.ranks[i] != i) return false;
  return true;
}

std::string group_text(const ProcessGroup& g) {
  if (g.ranks.empty()) return g.name + ": every rank";
  std::string out = g.name + ": ranks ";
  for (std::size_t i = 0; i < g.ranks.size(); ++i) out += (i ? ", " : "") + std::to_string(g.ranks[i]);
  return out;
}

}  // namespace

std::optional<std::uint64_t> global_rank_of(const std::vector<ProcessGroup>& groups, const std::string& pg_name,
                                            std::int64_t group_rank, std::string& why) {
  if (group_rank < 0) {
    why = "its peer is rank " + std::to_string(group_rank) + " (a receive from any source)";
    return std::nullopt;
  }
  const auto r = static_cast<std::uint64_t>(group_rank);
  if (!pg_name.empty()) {
    for (const ProcessGroup& g : groups) {
      if (g.name != pg_name) continue;
      if (g.ranks.empty()) return r;
      if (r < g.ranks.size()) return g.ranks[r];
      why = "its peer, rank " + std::to_string(r) + " of group " + group_text(g) + ", is not in that group";
      return std::nullopt;
    }
    why = "its process group " + pg_name + " is not in the ET's process_group:init node";
    return std::nullopt;
  }
  // No group named: the op's group can only be told when every group the
  // job made numbers its ranks as the world does (a job with the default
  // group alone, the usual pipeline over gloo).
  std::string list;
  bool all_identity = true;
  for (const ProcessGroup& g : groups) {
    list += (list.empty() ? "" : "; ") + group_text(g);
    all_identity = all_identity && numbers_ranks_as_world(g);
  }
  if (all_identity) return r;
  why = "the op names no process group and the job has " + std::to_string(groups.size()) +
        " groups of different ranks (" + list + ")";
  return std::nullopt;
}

P2pEnds p2p_ends(bool send, std::uint64_t self, std::uint64_t peer) {
  return send ? P2pEnds{self, peer} : P2pEnds{peer, self};
}

std::optional<P2pMessage> p2p_message(const EtPlusNode& op, const std::string& pg_name, std::uint64_t self,
                                      const std::vector<ProcessGroup>& groups, std::string& why) {
  const auto kind = host_p2p_kind(op.name);
  if (!kind || !op.p2p_peer || !op.p2p_tag || !op.comm_size) {
    why = "its inputs are not (tensors, group, peer, tag)";
    return std::nullopt;
  }
  if (*op.p2p_tag < 0 || *op.p2p_tag > std::numeric_limits<std::int32_t>::max()) {
    why = "its tag " + std::to_string(*op.p2p_tag) + " is out of ASTRA-sim's range";
    return std::nullopt;
  }
  const auto peer = global_rank_of(groups, pg_name, *op.p2p_peer, why);
  if (!peer) return std::nullopt;
  P2pMessage m;
  m.kind = *kind;
  m.ends = p2p_ends(m.kind == NodeKind::comm_send, self, *peer);
  m.tag = *op.p2p_tag;
  m.bytes = *op.comm_size;
  return m;
}

}  // namespace chakrashim::tools::convert
