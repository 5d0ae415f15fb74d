#include "link/device_ops.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <string_view>

#include "common/tool_schema.h"

namespace chakrashim::tools::link {

namespace {

// chakra_trace_link also accepts these ROCm calls (kineto_operator.py).
constexpr std::array<std::string_view, 6> kHipLaunchNames = {
    "hipLaunchKernel",  "hipExtLaunchKernel",  "hipExtModuleLaunchKernel",
    "hipModuleLaunchKernel", "hipMemcpyWithStream", "hipMemcpyAsync"};

bool contains_nccl_any_case(std::string_view name) {
  // Chakra: "nccl" in kineto_gpu_op.name.lower()
  for (std::size_t i = 0; i + 4 <= name.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(name[i])) == 'n' &&
        std::tolower(static_cast<unsigned char>(name[i + 1])) == 'c' &&
        std::tolower(static_cast<unsigned char>(name[i + 2])) == 'c' &&
        std::tolower(static_cast<unsigned char>(name[i + 3])) == 'l')
      return true;
  }
  return false;
}

std::int64_t or_minus_one(const IntArg& a) { return a.value.value_or(-1); }

}  // namespace

bool is_launch_name(std::string_view name) {
  return std::find(names::kChakraLaunchNames.begin(), names::kChakraLaunchNames.end(), name) !=
             names::kChakraLaunchNames.end() ||
         std::find(kHipLaunchNames.begin(), kHipLaunchNames.end(), name) != kHipLaunchNames.end();
}

void DeviceOpsBuilder::add(const TraceEvent& e) {
  ++ops_.events;
  const std::string_view cat = e.cat;
  const std::int64_t ts = e.ts_ns.value_or(0), dur = e.dur_ns.value_or(0);
  if (cat == "cpu_op" || cat == "user_annotation") {
    if (e.name.find("ProfilerStep") != std::string::npos) return;
    CpuOp op{ts, dur, e.tid, or_minus_one(e.external_id), e.record_function_id.value,
             e.name == "nccl:coalesced"};
    ops_.cpu.push_back(op);
  } else if (cat == names::kCatCudaRuntime || cat == names::kCatCudaDriver) {
    if (is_launch_name(e.name)) ops_.launches.push_back({or_minus_one(e.correlation), ts, e.tid});
  } else if (cat == names::kCatKernel || cat == names::kCatGpuMemcpy) {
    GpuOp op;
    op.ts = ts;
    op.dur = dur;
    op.correlation = or_minus_one(e.correlation);
    op.external_id = or_minus_one(e.external_id);
    op.stream = e.stream.value;
    op.name = ops_.names.intern(e.name);
    op.cat = ops_.names.intern(e.cat);
    op.ph = ops_.names.intern(e.ph);
    if (e.has_process_group_name) op.pg_name = ops_.names.intern(e.process_group_name);
    op.nccl_name = contains_nccl_any_case(e.name);
    ops_.gpu.push_back(op);
  } else if (cat == names::kCatGpuMemset) {
    ++ops_.memsets;
  }
}

DeviceOps DeviceOpsBuilder::finish() && {
  const auto by_ts = [](const auto& a, const auto& b) { return a.ts < b.ts; };
  std::stable_sort(ops_.cpu.begin(), ops_.cpu.end(), by_ts);
  std::stable_sort(ops_.gpu.begin(), ops_.gpu.end(), by_ts);
  std::stable_sort(ops_.launches.begin(), ops_.launches.end(),
                   [](const Launch& a, const Launch& b) { return a.correlation < b.correlation; });
  const auto dup = std::adjacent_find(ops_.launches.begin(), ops_.launches.end(),
                                      [](const Launch& a, const Launch& b) { return a.correlation == b.correlation; });
  if (dup != ops_.launches.end()) ops_.duplicate_correlation = dup->correlation;
  ops_.cpu.shrink_to_fit();
  ops_.gpu.shrink_to_fit();
  ops_.launches.shrink_to_fit();
  return std::move(ops_);
}

}  // namespace chakrashim::tools::link
