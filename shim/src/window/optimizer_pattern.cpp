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

}  // namespace chakrashim::window
