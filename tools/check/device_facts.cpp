#include "check/device_facts.h"

#include <algorithm>
#include <tuple>

#include "chakrashim/trace_schema.h"
#include "common/time_text.h"
#include "common/tool_schema.h"

namespace chakrashim::tools::check {

namespace s = chakrashim::schema;

namespace {

std::string describe(const TraceEvent& e) {
  std::string out = e.cat + " '" + e.name + "'";
  if (e.ts_ns) out += " at ts " + us_text(*e.ts_ns);
  return out;
}

bool is_launch_name(const std::string& name) {
  return std::find(names::kChakraLaunchNames.begin(), names::kChakraLaunchNames.end(), name) !=
         names::kChakraLaunchNames.end();
}

}  // namespace

void Tally::add(const TraceEvent& e) {
  if (count++ == 0) example = describe(e);
}

std::optional<std::uint64_t> profiler_step_number(const std::string& name) {
  if (name.rfind(s::kProfilerStepPrefix, 0) != 0) return std::nullopt;
  const std::string digits = name.substr(s::kProfilerStepPrefix.size());
  if (digits.empty() || digits.size() > 19 ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  return std::stoull(digits);
}

std::string strip_version_suffix(const std::string& name) {
  const auto pos = name.rfind("_v");
  if (pos == std::string::npos || pos + 2 == name.size()) return name;
  const bool digits = std::all_of(name.begin() + static_cast<std::ptrdiff_t>(pos) + 2, name.end(),
                                  [](char c) { return c >= '0' && c <= '9'; });
  return digits ? name.substr(0, pos) : name;
}

DeviceFacts::DeviceFacts(const std::vector<std::uint64_t>* et_op_rf_ids,
                         std::vector<std::uint64_t> marker_rf_ids)
    : et_op_rf_ids_(et_op_rf_ids), marker_rf_ids_(std::move(marker_rf_ids)) {
  if (et_op_rf_ids_ != nullptr) et_matched_.assign(et_op_rf_ids_->size(), false);
  std::sort(marker_rf_ids_.begin(), marker_rf_ids_.end());
}

std::uint32_t DeviceFacts::thread_of(const TraceEvent& e) {
  const auto [it, inserted] =
      threads_.try_emplace({e.pid, e.tid}, static_cast<std::uint32_t>(threads_.size()));
  return it->second;
}

void DeviceFacts::add(const TraceEvent& e) {
  if (e.ph != "X") return;
  if (e.cat == s::kCatCpuOp || e.cat == s::kCatUserAnnotation) {
    add_host(e);
  } else if (e.cat == names::kCatCudaRuntime || e.cat == names::kCatCudaDriver) {
    add_launch(e);
  } else if (e.cat == names::kCatKernel || e.cat == names::kCatGpuMemcpy ||
             e.cat == names::kCatGpuMemset) {
    add_gpu(e);
  }
}

void DeviceFacts::add_host(const TraceEvent& e) {
  if (e.stream.present) cpu_with_stream.add(e);
  const auto thread = thread_of(e);
  if (e.ts_ns && e.dur_ns) spans_.push_back({*e.ts_ns, *e.ts_ns + *e.dur_ns, thread});
  const auto step = profiler_step_number(e.name);
  if (step && e.ts_ns && e.dur_ns) steps.push_back({*step, thread, *e.ts_ns, *e.ts_ns + *e.dur_ns});
  if (!step) ++host_spans;
  // 0 is RecordFunction's "no handle": no ET node can join on it. Our
  // ProfilerStep#N has no ET node, so it needs none (torch.profiler's has).
  if (!e.record_function_id.value || *e.record_function_id.value <= 0) {
    if (!step) missing_rf_id.add(e);
    return;
  }
  const auto rf = static_cast<std::uint64_t>(*e.record_function_id.value);
  if (et_op_rf_ids_ != nullptr) {
    const auto [lo, hi] = std::equal_range(et_op_rf_ids_->begin(), et_op_rf_ids_->end(), rf);
    for (auto it = lo; it != hi; ++it) et_matched_[static_cast<std::size_t>(it - et_op_rf_ids_->begin())] = true;
  }
  if (e.ts_ns && std::binary_search(marker_rf_ids_.begin(), marker_rf_ids_.end(), rf)) {
    marker_hits.push_back({rf, thread, *e.ts_ns});
  }
}

void DeviceFacts::add_launch(const TraceEvent& e) {
  ++cuda_runtime;
  if (e.stream.present) cpu_with_stream.add(e);
  const auto thread = thread_of(e);
  if (e.ts_ns && e.dur_ns) spans_.push_back({*e.ts_ns, *e.ts_ns + *e.dur_ns, thread});
  const std::string stripped = strip_version_suffix(e.name);
  if (stripped != e.name && is_launch_name(stripped)) launch_suffix.add(e);
  if (e.correlation.value) launches_.push_back({*e.correlation.value, is_launch_name(e.name)});
}

void DeviceFacts::add_gpu(const TraceEvent& e) {
  const bool memset = e.cat == names::kCatGpuMemset;
  if (e.cat == names::kCatKernel) ++kernels;
  else if (memset) ++memsets;
  else ++memcpys;
  if (!e.stream.value || *e.stream.value <= 0) gpu_bad_stream.add(e);
  if (memset) return;  // Chakra links kernels and memcpys only
  if (!e.external_id.present) gpu_missing_external_id.add(e);
  if (e.correlation.value) gpu_correlations_.push_back(*e.correlation.value);
}

void DeviceFacts::find_equal_spans() {
  std::sort(spans_.begin(), spans_.end(), [](const Span& a, const Span& b) {
    return std::tie(a.thread, a.start, a.end) < std::tie(b.thread, b.start, b.end);
  });
  for (std::size_t i = 1; i < spans_.size(); ++i) {
    const Span& a = spans_[i - 1];
    const Span& b = spans_[i];
    if (a.thread != b.thread || a.start != b.start || a.end != b.end) continue;
    if (equal_spans++ > 0) continue;
    for (const auto& [key, index] : threads_) {
      if (index != a.thread) continue;
      equal_span_example = "pid " + std::to_string(key.first) + " tid " + std::to_string(key.second) +
                           ": two spans from ts " + us_text(a.start) + " to " +
                           us_text(a.end);
    }
  }
  spans_.clear();
  spans_.shrink_to_fit();
}

void DeviceFacts::find_launch_problems() {
  std::sort(launches_.begin(), launches_.end(),
            [](const Launch& a, const Launch& b) { return a.correlation < b.correlation; });
  for (std::size_t i = 1; i < launches_.size(); ++i) {
    if (launches_[i].correlation != launches_[i - 1].correlation) continue;
    if (duplicate_correlations++ == 0)
      duplicate_correlation_example = "correlation " + std::to_string(launches_[i].correlation);
  }
  for (const auto corr : gpu_correlations_) {
    const auto it = std::lower_bound(launches_.begin(), launches_.end(), corr,
                                     [](const Launch& l, std::int64_t c) { return l.correlation < c; });
    if (it == launches_.end() || it->correlation != corr || !it->chakra_name) ++gpu_ops_unlinked;
  }
  launches_ = {};
  gpu_correlations_ = {};
}

void DeviceFacts::finish() {
  find_equal_spans();
  find_launch_problems();
}

std::vector<std::uint64_t> DeviceFacts::steps_by_time() const {
  std::vector<StepEvent> sorted = steps;
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const StepEvent& a, const StepEvent& b) { return a.start_ns < b.start_ns; });
  std::vector<std::uint64_t> out;
  out.reserve(sorted.size());
  for (const auto& s : sorted) out.push_back(s.step);
  return out;
}

std::uint64_t DeviceFacts::et_ops_matched() const {
  return static_cast<std::uint64_t>(std::count(et_matched_.begin(), et_matched_.end(), true));
}

}  // namespace chakrashim::tools::check
