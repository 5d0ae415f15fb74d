#include "check/step_match.h"

#include <algorithm>
#include <optional>

namespace chakrashim::tools::check {

namespace {

void sort_unique(std::vector<std::uint64_t>& v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

// The step whose span holds the hit: the stepping thread's first, else any
// thread's (a marker on another thread still falls inside the step's time).
std::optional<std::uint64_t> step_of(const MarkerHit& hit, const std::vector<StepEvent>& steps) {
  std::optional<std::uint64_t> any;
  for (const auto& s : steps) {
    if (hit.ts_ns < s.start_ns || hit.ts_ns > s.end_ns) continue;
    if (s.thread == hit.thread) return s.step;
    if (!any) any = s.step;
  }
  return any;
}

}  // namespace

std::string step_order_problem(const std::vector<std::uint64_t>& steps) {
  bool ascending = true;
  for (std::size_t i = 1; i < steps.size(); ++i) ascending = ascending && steps[i] > steps[i - 1];
  if (ascending) return "";
  std::vector<std::uint64_t> sorted = steps, repeated;
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t i = 1; i < sorted.size(); ++i)
    if (sorted[i] == sorted[i - 1] && (repeated.empty() || repeated.back() != sorted[i])) repeated.push_back(sorted[i]);
  // A few dozen numbers say enough; a damaged file may hold thousands.
  constexpr std::size_t kShown = 24;
  std::string out;
  for (std::size_t i = 0; i < steps.size() && i < kShown; ++i) out += (i ? "," : "") + std::to_string(steps[i]);
  if (steps.size() > kShown) out += ",... (" + std::to_string(steps.size()) + ")";
  std::string dup;
  for (std::size_t i = 0; i < repeated.size() && i < kShown; ++i) dup += (i ? "," : "") + std::to_string(repeated[i]);
  if (repeated.size() > kShown) dup += ",...";
  return out + (repeated.empty() ? ": out of order" : ": " + dup + " more than once");
}

StepComparison compare_steps(const std::vector<EtMarker>& markers,
                             const std::vector<MarkerHit>& hits,
                             const std::vector<StepEvent>& steps) {
  StepComparison out;
  for (const auto& s : steps) out.device_steps.push_back(s.step);
  sort_unique(out.device_steps);
  out.markers = markers.size();
  for (const auto& m : markers) {
    const auto hit = std::find_if(hits.begin(), hits.end(),
                                  [&](const MarkerHit& h) { return h.rf_id == m.rf_id; });
    if (m.rf_id == 0 || hit == hits.end()) {
      ++out.markers_unjoined;
      continue;
    }
    if (const auto step = step_of(*hit, steps)) out.et_steps.push_back(*step);
    else ++out.markers_outside;
  }
  sort_unique(out.et_steps);
  return out;
}

}  // namespace chakrashim::tools::check
