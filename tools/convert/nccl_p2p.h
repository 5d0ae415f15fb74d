// NCCL's point-to-point kernels as messages ASTRA-sim can match (issue #50).
//
// chakra_converter turns an ncclDevKernel_SendRecv kernel into a COMM_SEND
// or COMM_RECV node with comm_size and pg_name only; ASTRA-sim's
// Workload::issue_send_comm / issue_recv_comm also read comm_src, comm_dst
// and comm_tag, and throw when the rank is not the sender or the receiver,
// so a GPU pipeline's capture could not be simulated at all. Both facts we
// need are on the host op that issued the message: c10d::send(tensors, pg,
// dst, tag) and c10d::recv_(tensors, pg, src, tag) (ProcessGroupNCCL's
// record_param_comms, the kernel's launcher, is its child).
//
// How ProcessGroupNCCL launches them decides which host ops a kernel carries:
//   - send / recv / isend / irecv: the kernel is launched inside the op's
//     record_param_comms, so the op is the kernel's ancestor: one message;
//   - batch_isend_irecv on CUDA (torch.distributed.pipelining's schedules
//     use it): torch's _coalescing_manager opens an NCCL group, each op only
//     enqueues, and one SendRecv kernel is launched at ncclGroupEnd in
//     endCoalescing, after every op's record_param_comms closed. The link
//     (Chakra's rule: skip "nccl:coalesced") puts it under the op that ran
//     last, the group's last; the ops before it on the thread have no kernel.
// So, on each host thread in time order, the point-to-point ops since the
// thread's last SendRecv kernel belong to the next one, launched under the
// last of them: the kernel stands for all of them (ops that reach a kernel
// not theirs, or none, are counted as unmapped, not handed on). It is written as the first message, and a copy of it with a
// new id (after every id of the file) for each further one, with the same
// deps, so the group's messages go out together, as NCCL runs them (chained,
// a group whose ops are a receive then a send on both stages would
// deadlock in the simulator); whatever depended on the kernel depends on
// every copy.
//
// Chakra's graph hangs a kernel on its launcher only: nothing on the GPU
// waits for a receive, and a send may leave before the kernels that made
// its data. On the GPU they did wait (NCCL's stream waits for the compute
// stream's event before the op; the compute stream waits for the work's
// end event at work.wait()). So each message kernel is ordered as it ran:
// it depends on, per stream, the last GPU node that ended before it began
// (looking back past at most a few still running then);
// and the first GPU node of each stream that began after a receive ended
// depends on the receive. Both only add edges from a node that ended to one
// that began later, so they make no cycle; where the simulated network is
// slower than the job's, the work after a receive waits for it, as the
// job's did (the stages are coupled).
//
// A kernel whose host op is not found, or whose peer cannot be told, is
// written as compute (GPU) instead, its ops counted in p2p_unmapped with the
// reason:
// left as a send or receive without ends, ASTRA-sim would stop at it.
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "convert/chakra_graph.h"
#include "convert/comm_groups.h"
#include "convert/et_encoding.h"
#include "convert/et_plus_reader.h"
#include "convert/sim_ready.h"

namespace chakrashim::tools::convert {

// Rewrites the graph's SendRecv kernels (COMM_SEND / COMM_RECV nodes) as
// above. `groups`: the ET's process groups; `rank`: the file's (none: every
// kernel is unmapped). Counts into stats.p2p, p2p_unmapped, p2p_messages,
// nccl_group_kernels and nccl_group_messages, and the graph's sends and
// receives. False (graph.error) only when a node's attributes do not parse.
// `index`: each node id's position in trace.nodes (SimReady's).
bool nccl_point_to_point(const EtPlus& trace, const std::unordered_map<std::uint64_t, std::uint32_t>& index,
                         ChakraGraph& graph, NodeEncoder& encoder, std::optional<std::uint64_t> rank,
                         const std::vector<ProcessGroup>& groups, SimReadyStats& stats);

}  // namespace chakrashim::tools::convert
