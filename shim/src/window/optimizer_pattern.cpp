#include "window/optimizer_pattern.h"

#include <algorithm>

namespace chakrashim::window {

std::optional<OptimizerPattern::Detection> OptimizerPattern::on_step(std::uint64_t id, std::uint64_t step) {
  if (told_) return std::nullopt;
  const bool returning = any_ && id != last_ && std::find(seen_.begin(), seen_.end(), id) != seen_.end();
  if (std::find(seen_.begin(), seen_.end(), id) == seen_.end() && seen_.size() < kRemembered) seen_.push_back(id);
  last_ = id;
  any_ = true;
  if (!returning) return std::nullopt;
  told_ = true;
  return Detection{step, seen_.size()};
}

std::optional<std::uint64_t> OptimizerPattern::on_groups(std::uint64_t id, std::uint64_t first_group,
                                                         std::uint64_t step) {
  if (!groups_watched(step) || first_group == 0) return std::nullopt;
  auto it = std::find_if(groups_.begin(), groups_.end(), [id](const Groups& g) { return g.optimizer == id; });
  if (it == groups_.end()) {
    if (groups_.size() < kRemembered) groups_.push_back({id, first_group, {}});
    return std::nullopt;
  }
  if (it->last == first_group) return std::nullopt;
  const bool back = std::find(it->earlier.begin(), it->earlier.end(), first_group) != it->earlier.end();
  if (!back && it->earlier.size() < kRemembered) it->earlier.push_back(it->last);
  it->last = first_group;
  if (!back) return std::nullopt;
  groups_told_ = true;
  return step;
}

}  // namespace chakrashim::window
