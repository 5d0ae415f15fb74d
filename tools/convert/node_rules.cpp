#include "convert/node_rules.h"

#include <array>
#include <cctype>
#include <string>

namespace chakrashim::tools::convert {

namespace {
bool contains(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }
}  // namespace

bool is_root_name(std::string_view name) {
  return name == "[pytorch|profiler|execution_graph|thread]" || name == "[pytorch|profiler|execution_trace|thread]";
}

bool is_metadata_name(std::string_view name) { return contains(name, "process_group:init"); }

bool zero_duration_name(std::string_view name) { return contains(name, "Optimizer.step"); }

bool is_send_recv_kernel(std::string_view gpu_name) { return contains(gpu_name, "ncclDevKernel_SendRecv"); }

bool launcher_is_grandparent(std::string_view parent_name) { return parent_name == "record_param_comms"; }

NodeKind gpu_node_kind(std::string_view gpu_name, std::string_view launcher_name) {
  if (is_send_recv_kernel(gpu_name)) {
    if (contains(launcher_name, "send")) return NodeKind::comm_send;
    if (contains(launcher_name, "recv")) return NodeKind::comm_recv;
    if (contains(launcher_name, "nccl:all_to_all")) return NodeKind::comm_coll;
  }
  if (contains(gpu_name, "ncclKernel") || contains(gpu_name, "ncclDevKernel")) return NodeKind::comm_coll;
  return NodeKind::comp;
}

std::optional<CollKind> collective_kind(std::string_view gpu_name) {
  std::string normalized;
  normalized.reserve(gpu_name.size());
  for (const char c : gpu_name) {
    if (c == '_' || c == '-') continue;
    normalized += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  static constexpr std::array<std::pair<std::string_view, CollKind>, 5> kKinds = {{
      {"allreduce", CollKind::all_reduce},
      {"alltoall", CollKind::all_to_all},
      {"allgather", CollKind::all_gather},
      {"reducescatter", CollKind::reduce_scatter},
      {"broadcast", CollKind::broadcast},
  }};
  for (const auto& [key, kind] : kKinds) {
    if (contains(normalized, key)) return kind;
  }
  if (is_send_recv_kernel(gpu_name)) return CollKind::all_to_all;
  return std::nullopt;
}

std::optional<CollKind> host_collective_kind(std::string_view name) {
  if (name.rfind("c10d::", 0) != 0) return std::nullopt;
  return collective_kind(name);
}

bool is_async_work_name(std::string_view name) {
  return name.rfind("gloo:", 0) == 0 || name.rfind("nccl:", 0) == 0;
}

bool is_comm_wait_name(std::string_view name) {
  return name == "_c10d_functional::wait_tensor" || name == "c10d_functional::wait_tensor";
}

std::optional<NodeKind> host_p2p_kind(std::string_view name) {
  if (name == "c10d::send") return NodeKind::comm_send;
  if (name == "c10d::recv_") return NodeKind::comm_recv;
  return std::nullopt;
}

}  // namespace chakrashim::tools::convert
