#include "report/event_table.h"

#include "chakrashim/trace_schema.h"
#include "check/device_facts.h"
#include "common/tool_schema.h"
#include "report/kernel_kind.h"

namespace chakrashim::tools::report {

namespace s = chakrashim::schema;

namespace {

// The host categories that nest on a thread and make up its time. Python
// stack events are left out: they would rank frames among the ops.
bool is_host_category(const std::string& cat) {
  return cat == s::kCatCpuOp || cat == s::kCatUserAnnotation || cat == names::kCatCudaRuntime ||
         cat == names::kCatCudaDriver;
}

}  // namespace

std::uint32_t EventTable::intern(const std::string& name) {
  const auto [it, inserted] = name_ids_.try_emplace(name, static_cast<std::uint32_t>(names.size()));
  if (inserted) names.push_back(name);
  return it->second;
}

std::uint32_t EventTable::index_of(std::map<std::pair<std::int64_t, std::int64_t>, std::uint32_t>& ids,
                                   std::vector<std::pair<std::int64_t, std::int64_t>>& list,
                                   std::pair<std::int64_t, std::int64_t> key) {
  const auto [it, inserted] = ids.try_emplace(key, static_cast<std::uint32_t>(list.size()));
  if (inserted) list.push_back(key);
  return it->second;
}

void EventTable::add(const TraceEvent& e) {
  if (e.ph != "X" || !e.ts_ns || !e.dur_ns || *e.dur_ns < 0) return;
  const std::int64_t start = *e.ts_ns, end = *e.ts_ns + *e.dur_ns;
  if (const auto kind = gpu_kind(e.cat, e.name)) {
    const std::int64_t stream = e.stream.value.value_or(e.tid);
    gpu.push_back({start, end, intern(e.name), index_of(lane_ids_, lanes, {e.pid, stream}), *kind});
    return;
  }
  if (!is_host_category(e.cat)) return;
  const std::uint32_t thread = index_of(thread_ids_, threads, {e.pid, e.tid});
  if (e.cat == s::kCatUserAnnotation) {
    if (const auto n = check::profiler_step_number(e.name)) {
      steps.push_back({*n, start, end, thread});
      return;
    }
  }
  host.push_back({start, end, intern(e.name), thread, e.cat == s::kCatUserAnnotation});
}

}  // namespace chakrashim::tools::report
