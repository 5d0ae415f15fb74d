// chakra_converter's graph over an ET+ (PyTorchConverter.convert at Chakra
// 21585d8), step by step:
//   1. nodes that are not GPU ops are converted in file order, each followed
//      by its GPU children; a node's ctrl dep is its parent when the parent
//      was converted before it; GPU children get their type and comm attrs;
//   2. from each thread root, a depth-first walk over children (smallest id
//      first) turns the call order into data deps: a CPU node depends on the
//      CPU node visited before it (and on its inter_thread_dep), a GPU node
//      on the node visited before it; HTA's sync deps are kept only when the
//      prior node started earlier, and the converter never sets a start
//      time, so none is kept;
//   3. nodes with no data deps that nothing depends on are dropped;
//   4. a dep on a node that is not there, or a cycle, is an error.
// The result is the nodes to write, in id order.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "convert/et_encoding.h"
#include "convert/et_plus_reader.h"

namespace chakrashim::tools::convert {

struct ChakraNode {
  std::uint32_t index = 0;  // into EtPlus::nodes
  // The id written where it is not the ET+ node's: a further message of an
  // NCCL kernel that carries several (nccl_p2p.h), written as a copy of it,
  // or the rank's kCommDoneName node (sim_ready.h).
  std::optional<std::uint64_t> id;
  bool comm_done = false;  // written as kCommDoneName, not its ET+ node's name
  NodeKind kind = NodeKind::comp;
  std::optional<std::uint64_t> ctrl_dep;
  std::vector<std::uint64_t> data_deps;
  std::string comm;  // encoded comm attrs (et_encoding.h), empty if none
  // Set by make_sim_ready (sim_ready.h) only: the duration written instead
  // of int(exclusive_dur), and a tail written instead of the node's.
  std::optional<std::uint64_t> duration;
  std::string tail;
};

// The node make_sim_ready adds after a rank's communication that nothing
// waits for (sim_ready.h, 4.).
inline constexpr const char* kCommDoneName = "chakrashim::comm_done";

struct GraphStats {
  std::uint64_t converted = 0, dropped_dangling = 0, written = 0;
  // Of the dropped: nodes without a parent of their own (the ET's root, whose
  // parent is itself): dropping them
  // loses nothing ASTRA-sim runs.
  std::uint64_t dropped_roots = 0;
  std::uint64_t collectives = 0, sends = 0, receives = 0;
  // make_sim_ready's work: host c10d collectives written as COMM_COLL (also
  // counted in `collectives`), ctrl deps on nodes not written, removed,
  // METADATA nodes written as COMP.
  std::uint64_t host_collectives = 0, ctrl_deps_dropped = 0, metadata_as_comp = 0;
};

struct ChakraGraph {
  bool ok = false;
  std::string error;               // one line
  std::vector<ChakraNode> nodes;   // to write, in id order
  GraphStats stats;
};

ChakraGraph build_chakra_graph(const EtPlus& trace, NodeEncoder& encoder);

}  // namespace chakrashim::tools::convert
