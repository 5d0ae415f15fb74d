// Which kind of GPU work an event is, by category and name, the way
// chakra_converter classifies it (docs/trace-format.md): NCCL kernels are
// communication, memcpys and memsets are memory, other kernels compute.
//   ("kernel", "ncclDevKernel_AllReduce_Sum_f32_RING_LL(...)") -> communication
//   ("kernel", "void at::native::vectorized_elementwise_kernel<...>") -> compute
//   ("gpu_memcpy", "Memcpy HtoD (Pageable -> Device)") -> memory
//   ("cpu_op", "aten::mm") -> nullopt (not GPU work)
#pragma once

#include <optional>
#include <string_view>

#include "report/event_table.h"

namespace chakrashim::tools::report {

std::optional<GpuKind> gpu_kind(std::string_view category, std::string_view name);
// "compute", "communication", "memory"
std::string_view kind_name(GpuKind kind);

}  // namespace chakrashim::tools::report
