// Point-to-point ops for ASTRA-sim (issue #50): which global rank a
// c10d::send or c10d::recv_ talks to. torch records the peer as a rank of
// the op's process group (c10d::send(Tensor[] tensors, ProcessGroup pg,
// int dst, int tag)), while ASTRA-sim's Workload::issue_send_comm and
// issue_recv_comm take global ranks in comm_src and comm_dst (and throw
// when the issuing rank is not the sender or the receiver). A group's ranks,
// from the ET's "## process_group:init ##" node, are global ranks in group
// rank order (torch sorts them in new_group); an empty list is every rank.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "convert/comm_groups.h"
#include "convert/et_encoding.h"
#include "convert/et_plus_reader.h"

namespace chakrashim::tools::convert {

// The global rank of `group_rank` in the op's group: the group named
// `pg_name`, or, when the node names none, the only kind of group the job
// has where group and global ranks agree (every group is all ranks). nullopt
// with `why` (one clause, e.g. "the op names no process group and the job
// has 2 groups of different ranks (0: every rank, 1: ranks 2, 3)") when it
// cannot be told.
std::optional<std::uint64_t> global_rank_of(const std::vector<ProcessGroup>& groups, const std::string& pg_name,
                                            std::int64_t group_rank, std::string& why);

// The ends of a point-to-point op on rank `self`: a send goes from `self` to
// the peer, a receive from the peer to `self`.
struct P2pEnds {
  std::uint64_t src = 0, dst = 0;
};
P2pEnds p2p_ends(bool send, std::uint64_t self, std::uint64_t peer);

// The message a c10d::send or c10d::recv_ on rank `self` stands for, its
// peer read in group `pg_name` (the op's own, or its kernel's); nullopt
// with `why` (one clause) when its inputs are not (tensors, group, peer,
// tag), its tag is out of ASTRA-sim's range (int32), or the peer cannot
// be told (global_rank_of).
struct P2pMessage {
  NodeKind kind = NodeKind::comm_send;
  P2pEnds ends;
  std::int64_t tag = 0, bytes = 0;
};
std::optional<P2pMessage> p2p_message(const EtPlusNode& op, const std::string& pg_name, std::uint64_t self,
                                      const std::vector<ProcessGroup>& groups, std::string& why);

}  // namespace chakrashim::tools::convert
