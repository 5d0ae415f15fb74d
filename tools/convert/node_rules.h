// chakra_converter's rules for one node, from names alone (Chakra 21585d8,
// PyTorchConverter and PyTorchNode).
#pragma once

#include <optional>
#include <string_view>

#include "convert/et_encoding.h"

namespace chakrashim::tools::convert {

// The per-thread roots the converter walks from:
// "[pytorch|profiler|execution_trace|thread]" (and execution_graph's).
bool is_root_name(std::string_view name);

// "## process_group:init ##": a METADATA node, even with a "cat".
bool is_metadata_name(std::string_view name);

// Nodes whose duration the converter zeroes ("covering more than 90% of the
// runtime"): any name containing "Optimizer.step".
bool zero_duration_name(std::string_view name);

// A GPU node's type. Send/recv kernels (ncclDevKernel_SendRecv) take it from
// their launcher's name (the op above record_param_comms when that is the
// parent): "send" -> COMM_SEND, "recv" -> COMM_RECV; other NCCL kernels
// (ncclKernel*, ncclDevKernel*) are collectives, the rest compute.
//   parent_name: the GPU node's parent; launcher_name: the parent's parent,
//   asked for only when the parent is record_param_comms.
bool is_send_recv_kernel(std::string_view gpu_name);
bool launcher_is_grandparent(std::string_view parent_name);  // == "record_param_comms"
NodeKind gpu_node_kind(std::string_view gpu_name, std::string_view launcher_name);

// A collective's type from its kernel's name, lower-cased without '_' and
// '-': allreduce, alltoall, allgather, reducescatter, broadcast, in that
// order; a SendRecv kernel is an all-to-all. nullopt where the converter
// raises ValueError.
std::optional<CollKind> collective_kind(std::string_view gpu_name);

// A host collective: a c10d op ("c10d::allreduce_", "c10d::_allgather_base_",
// "c10d::broadcast_", ...) whose type collective_kind gives. Every backend
// records them, gloo included. nullopt for others (barrier, reduce, gather,
// scatter, send, recv: ASTRA-sim has no collective for them).
std::optional<CollKind> host_collective_kind(std::string_view name);

// A host point-to-point op: "c10d::send" -> COMM_SEND, "c10d::recv_" ->
// COMM_RECV (isend, irecv and batch_isend_irecv call these too). nullopt
// for others, recv_any_source_ included (its peer is known only at run time).
std::optional<NodeKind> host_p2p_kind(std::string_view name);

// A backend's record of an asynchronous collective or point-to-point work
// ("gloo:all_reduce", "gloo:send", "nccl:all_reduce"): c10d opens it on the
// calling thread as the op is issued and ends it when the backend's own
// thread completes the work, so its span is the communication's, not the
// calling thread's compute, and ops the thread runs meanwhile nest under it.
bool is_async_work_name(std::string_view name);
// An op whose time is the calling thread waiting for a collective it issued:
// functional collectives' wait (_c10d_functional::wait_tensor, and
// c10d_functional::wait_tensor before torch 2.3), which DTensor, tensor
// parallel and torch.compile'd collectives call.
bool is_comm_wait_name(std::string_view name);

}  // namespace chakrashim::tools::convert
