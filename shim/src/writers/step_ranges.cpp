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

std::string captured_text(const StepsMeta& steps) {
  const std::size_t n = steps.captured.size();
  const std::string count = "(" + std::to_string(n) + (n == 1 ? " step" : " steps");
  if (!steps.partial_last_step) return "captured steps [" + step_ranges(steps.captured) + "] " + count;
  // The files also hold the step the window ended in (issue #49: the line
  // named only the whole ones); link and convert leave it out.
  if (n > 0)
    return "captured steps [" + step_ranges(steps.captured) + "] + partial step " +
           std::to_string(*steps.partial_last_step) + ", cut by " + steps.reason + " " + count;
  const std::string window =
      steps.start == steps.end ? std::to_string(steps.start)
                               : std::to_string(steps.start) + "-" + std::to_string(steps.end);
  const std::string p = std::to_string(*steps.partial_last_step);
  const std::string opening = "captured no whole step of the window [" + window + "]: ";
  // A signal or the memory cap says why itself; only an exit inside the
  // first step hides one.
  if (steps.reason != "exit")
    return opening + "it ended (" + steps.reason + ") during step " + p + ", so only that partial step is kept " +
           count;
  return opening + "the job ended during step " + p +
         ", before any optimizer step completed it (an iteration whose optimizer.step() does not run is no step, "
         "as when a GradScaler skips it on inf or nan gradients), so only that partial step is kept " + count;
}

}  // namespace chakrashim::writers
