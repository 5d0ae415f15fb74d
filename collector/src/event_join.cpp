// join_device_capture() and demangle() of chakrashim/collector.h. Pure:
// no CUPTI, no torch; unit-tested directly.
#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <unordered_map>
#include <unordered_set>

#include "chakrashim/collector.h"

namespace chakrashim::collector {

std::string demangle(const std::string& name) {
  if (name.rfind("_Z", 0) != 0) return name;
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> out(
      abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status), &std::free);
  return (status == 0 && out) ? std::string(out.get()) : name;
}

namespace {

bool is_launch(DeviceEventKind k) { return k == DeviceEventKind::runtime || k == DeviceEventKind::driver; }
bool is_gpu_op(DeviceEventKind k) {
  return k == DeviceEventKind::kernel || k == DeviceEventKind::memcpy || k == DeviceEventKind::memset;
}

class StepRanges {
 public:
  explicit StepRanges(std::vector<std::pair<std::int64_t, std::int64_t>> r) : r_(std::move(r)) {
    std::sort(r_.begin(), r_.end());
  }
  bool contains(std::int64_t t) const {
    auto it = std::upper_bound(r_.begin(), r_.end(), std::make_pair(t, INT64_MAX));
    return it != r_.begin() && t <= std::prev(it)->second;
  }
  bool empty() const { return r_.empty(); }
  std::int64_t first() const { return r_.front().first; }
  std::int64_t last() const {
    std::int64_t m = INT64_MIN;
    for (const auto& [a, b] : r_) m = std::max(m, b);
    return m;
  }

 private:
  std::vector<std::pair<std::int64_t, std::int64_t>> r_;
};

}  // namespace

void join_device_capture(DeviceCapture& c,
                         const std::vector<std::pair<std::int64_t, std::int64_t>>& steps) {
  const StepRanges ranges(steps);
  if (ranges.empty()) {
    c.events.clear();
    return;
  }
  std::unordered_map<std::uint32_t, std::uint64_t> external;
  external.reserve(c.correlations.size());
  // The innermost op: CUPTI writes one record per kind for the top of the
  // stack; of ours there is one per launch.
  for (const auto& link : c.correlations) external[link.correlation] = link.external_id;
  std::unordered_map<std::uint32_t, std::int64_t> tids(c.threads.begin(), c.threads.end());

  // Launches: kept when they start inside a captured step.
  std::unordered_map<std::uint32_t, std::size_t> kept_launch;  // correlation -> index
  std::unordered_set<std::uint32_t> any_launch;
  std::vector<char> keep(c.events.size(), 0);
  external.reserve(c.correlations.size());
  for (std::size_t i = 0; i < c.events.size(); ++i) {
    DeviceEvent& e = c.events[i];
    if (!is_launch(e.kind)) continue;
    any_launch.insert(e.correlation);
    if (!ranges.contains(e.start_ns)) continue;
    keep[i] = 1;
    auto t = tids.find(e.stream);
    e.tid = t != tids.end() ? t->second : static_cast<std::int64_t>(e.stream);
    if (auto x = external.find(e.correlation); x != external.end()) e.external_id = x->second;
    kept_launch.emplace(e.correlation, i);
  }
  // GPU ops: kept with their launch (they run after it, often after the
  // step ended); one whose launch CUPTI did not record, by its own start.
  const std::int64_t window_start = ranges.first(), window_end = ranges.last();
  for (std::size_t i = 0; i < c.events.size(); ++i) {
    DeviceEvent& e = c.events[i];
    if (is_launch(e.kind)) continue;
    if (is_gpu_op(e.kind)) {
      if (auto l = kept_launch.find(e.correlation); l != kept_launch.end()) {
        keep[i] = 1;
        e.flow = true;
        c.events[l->second].flow = true;
      } else if (!any_launch.count(e.correlation) && e.start_ns >= window_start &&
                 e.start_ns <= window_end) {
        keep[i] = 1;
      }
    } else {
      keep[i] = ranges.contains(e.start_ns);
    }
    if (!keep[i]) continue;
    if (auto x = external.find(e.correlation); x != external.end()) e.external_id = x->second;
    // A kernel or memcpy no op can claim (its correlation record was
    // dropped, or it was launched outside any op): trace_link would hang it
    // under the wrong parent (docs/trace-format.md), so it is left out, and
    // counted.
    if (is_gpu_op(e.kind) && e.external_id == 0) {
      keep[i] = 0;
      ++c.unattributed_gpu_ops;
      if (auto l = kept_launch.find(e.correlation); l != kept_launch.end()) c.events[l->second].flow = false;
    }
  }
  std::size_t out = 0;
  for (std::size_t i = 0; i < c.events.size(); ++i)
    if (keep[i]) c.events[out++] = c.events[i];
  c.events.resize(out);
  for (auto& name : c.names) name = demangle(name);
}

}  // namespace chakrashim::collector
