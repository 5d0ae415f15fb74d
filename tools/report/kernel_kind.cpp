#include "report/kernel_kind.h"

#include "common/tool_schema.h"

namespace chakrashim::tools::report {

namespace {

// A name may carry a demangled return type ("void ncclKernel...").
bool is_nccl_kernel(std::string_view name) {
  if (name.starts_with("void ")) name.remove_prefix(5);
  return name.starts_with("ncclKernel") || name.starts_with("ncclDevKernel");
}

}  // namespace

std::optional<GpuKind> gpu_kind(std::string_view category, std::string_view name) {
  if (category == names::kCatKernel) return is_nccl_kernel(name) ? GpuKind::communication : GpuKind::compute;
  if (category == names::kCatGpuMemcpy || category == names::kCatGpuMemset) return GpuKind::memory;
  return std::nullopt;
}

std::string_view kind_name(GpuKind kind) {
  switch (kind) {
    case GpuKind::compute: return "compute";
    case GpuKind::communication: return "communication";
    case GpuKind::memory: return "memory";
  }
  return "compute";
}

}  // namespace chakrashim::tools::report
