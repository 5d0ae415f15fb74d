#include "writers/step_ranges.h"

#include <algorithm>

namespace chakrashim::writers {

std::string step_ranges(std::vector<std::uint64_t> steps) {
  std::sort(steps.begin(), steps.end());
  steps.erase(std::unique(steps.begin(), steps.end()), steps.end());
  std::string out;
  for (std::size_t i = 0; i < steps.size();) {
    std::size_t j = i;
    while (j + 1 < steps.size() && steps[j + 1] == steps[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(steps[i]);
    if (j > i) out += '-' + std::to_string(steps[j]);
    i = j + 1;
  }
  return out;
}

}  // namespace chakrashim::writers
