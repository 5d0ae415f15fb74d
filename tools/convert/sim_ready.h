// What `chakrashim convert` changes, by default, in the graph that
// chakra_converter's rules build (chakra_graph.h), so that ASTRA-sim runs it
// and runs it as the job ran (issue #36). `--chakra-exact` skips all of it
// and writes Chakra's bytes.
//   1. Feeder-valid: a ctrl dep on a node that is not written is removed.
//      The converter drops the process root as dangling but keeps the
//      thread roots' ctrl deps on it, and ASTRA-sim's feeder then stops:
//      "Node 0 in ctrl_dep graph, but not found in index".
//      And the "## process_group:init ##" node is written as COMP, not
//      METADATA: ASTRA-sim's Statistics::get_operator_type asserts on a
//      METADATA node ("Invalid node_type"); its process groups go to the
//      communicator-group file instead (comm_groups.h).
//   2. Host collectives: a rank with no NCCL kernel (gloo, any CPU capture)
//      gets its c10d collectives (node_rules.h host_collective_kind) as
//      COMM_COLL nodes: comm_type, comm_size (the tensors' bytes), pg_name
//      when known, and is_cpu_op false (ASTRA-sim refuses comm on the CPU).
//      Its c10d::send and c10d::recv_ become COMM_SEND and COMM_RECV nodes
//      with comm_src, comm_dst (global ranks), comm_tag and comm_size, which
//      ASTRA-sim matches across ranks (issue #50: a pipeline's stages ran as
//      independent jobs without them). On a rank with NCCL kernels, its
//      SendRecv kernels get the same attributes from the ops that issued
//      them (nccl_p2p.h), one message node per op of a coalesced group.
//   3. Timeline durations (`gaps`, on by default): on each host thread the
//      time between top-level ops (Python, the data loader, the optimizer's
//      bookkeeping: mlcommons/chakra#220) is folded into the following
//      top-level op, and durations come from exact nanoseconds, rounded so
//      that a thread's durations add up to its captured time within 1 us
//      (int() per node loses up to 1 us a node). Optimizer.step keeps its
//      own exclusive time (the converter zeroes it). A backend's async work
//      record (gloo:all_reduce, gloo:send, ...: node_rules.h) spans the
//      communication, not compute: it is written with no duration, ops
//      nested under it count where they ran, and a gap while it is
//      outstanding is the thread waiting for it, which the comm node
//      stands for, so it is not folded in.
//   4. A rank whose GPU comm nodes include one that nothing waits for (an
//      NCCL kernel: Chakra's graph hangs it on its launcher, and nothing on
//      it; a host comm node is in its thread's chain)
//      gets one GPU node of no duration, kCommDoneName (chakra_graph.h),
//      after all of them: ASTRA-sim (518bd51) throws in its statistics
//      (Statistics::extract_comp_comm_overlap, "Only GPU and COMM types are
//      supported", on any rank that ran a CPU node) as each rank finishes;
//      where the rank's last node ends on compute, Sys::call_events catches
//      it, but where a send or receive ends it, in the network's callback,
//      nothing does, and the simulator aborts before the other ranks end
//      (a 1F1B pipeline over NCCL, every time). The rank's work is not done
//      before its messages are, so the node adds no time.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "convert/chakra_graph.h"
#include "convert/et_encoding.h"
#include "convert/et_plus_reader.h"
#include "convert/network_fit.h"
#include "convert/p2p_ranks.h"

namespace chakrashim::tools::convert {

struct ConvertOptions {
  bool chakra_exact = false;  // Chakra's output, byte for byte: nothing below
  bool gaps = true;           // 3. above
  // The recorder's own cost per recorded op, in ns (--op-cost-ns; 0: none).
  // With gaps, each op's cost is taken from where it lands, outside the
  // op's own span: its parent's exclusive time, or the gap before a
  // top-level op. A thread's total then shrinks by the cost times its ops.
  std::int64_t op_cost_ns = 0;
  // Without --op-cost-ns: the cost the capture measured (its device trace's
  // recording_cost, read by convert_one), where the rank was linked in
  // memory from a capture of ours; 0 otherwise.
  bool op_cost_from_capture = false;
  // Why the capture's figure is the gaps' and not its steps' (its
  // recording_cost.step_refused), said where the cost is taken out.
  std::string op_cost_refused;
  // The file's rank: point-to-point ops (c10d::send, c10d::recv_) on a rank
  // without NCCL kernels become COMM_SEND / COMM_RECV nodes with global
  // comm_src and comm_dst (p2p_ranks.h), and NCCL's send/recv kernels get
  // them from those ops (nccl_p2p.h); unknown, they stay compute.
  std::optional<std::uint64_t> rank;
};

struct SimReadyStats {
  std::uint64_t gap_ns = 0;    // folded in, all threads
  // Gap time while async communication the thread issued was outstanding:
  // the thread waiting for it, left to the simulated comm node instead.
  std::uint64_t comm_wait_ns = 0;
  // Async work records (gloo:*, nccl:*) written with no duration.
  std::uint64_t async_records = 0;
  std::uint64_t threads = 0;   // host threads given timeline durations
  std::uint64_t cost_ns = 0;   // recording cost taken out (op_cost_ns x ops)
  std::int64_t op_cost_ns = 0;  // the cost per op it took out
  bool cost_from_capture = false;  // op_cost_ns as the capture measured it
  std::string cost_refused;        // ConvertOptions::op_cost_refused, where cost_ns > 0
  // Process groups the host collectives name, with their node count.
  std::map<std::string, std::uint64_t> groups;
  // Host collectives whose group the ET does not name (torch's observer
  // writes "<Object>"; chakrashim's recorder names it, issue #50).
  std::uint64_t unnamed_collectives = 0;
  // Point-to-point ops written as COMM_SEND / COMM_RECV, and those left as
  // compute because their peer's global rank cannot be told (the first
  // reason, one clause, for the warning).
  std::uint64_t p2p = 0, p2p_unmapped = 0;
  std::string p2p_unmapped_why;
  // Each point-to-point message written, by (src, dst, tag, bytes): sends
  // and receives counted apart, for convert's match across ranks.
  struct P2pCount {
    std::uint64_t sends = 0, receives = 0;
  };
  std::map<std::array<std::int64_t, 4>, P2pCount> p2p_messages;
  // One more message written: p2p and p2p_messages.
  void count_message(const P2pMessage& m) {
    ++p2p;
    auto& seen = p2p_messages[{static_cast<std::int64_t>(m.ends.src), static_cast<std::int64_t>(m.ends.dst), m.tag,
                               m.bytes}];
    ++(m.kind == NodeKind::comm_send ? seen.sends : seen.receives);
  }
  // NCCL SendRecv kernels that carried a batch_isend_irecv group of more
  // than one op, and the messages written for them (nccl_p2p.h).
  std::uint64_t nccl_group_kernels = 0, nccl_group_messages = 0;
  // 4.: the comm nodes nothing waited for, which kCommDoneName waits for.
  std::uint64_t comm_sinks = 0;
  // Each comm node's time as the job measured it (its backend's async
  // record), keyed so that the same op on every rank has the same key (its
  // kind, group or ends, and its place among them on the rank), for the
  // network fit (network_fit.h); npus 0: the whole world.
  std::map<std::string, CommSample> comm_samples;
};

// A message's key among the network fit's samples (before its ordinal),
// the same on both ends: gloo's host messages and NCCL's kernels alike.
std::string p2p_sample_key(std::uint64_t src, std::uint64_t dst, std::int64_t tag, std::int64_t bytes);

// False (and `error`) only when a host collective cannot be encoded.
bool make_sim_ready(const EtPlus& trace, ChakraGraph& graph, NodeEncoder& encoder, const ConvertOptions& options,
                    SimReadyStats* stats = nullptr);

// The rounding of 3.: each node's duration is the whole microseconds the
// running total reaches after it, less what was written before; a negative
// part (a recording cost above the time it lands on) is taken from later.
//   ns 400, 400, 400 -> us 0, 1, 0 (1.2 us in all -> 1)
//   ns 3000, -1500, 1000 -> us 3, 0, 0 (2.5 us in all -> 3, at most)
class MicrosCarry {
 public:
  std::uint64_t add(std::int64_t ns);

 private:
  std::int64_t total_ns_ = 0;
  std::uint64_t written_us_ = 0;
};

}  // namespace chakrashim::tools::convert
