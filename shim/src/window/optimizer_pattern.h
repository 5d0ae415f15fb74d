// Several optimizers stepping in each iteration (a GAN's generator and
// discriminator), told from the optimizers that take the outermost steps.
// Every optimizer step is a step (docs/how-it-works.md, as Lightning counts
// them), so there the window spans fewer iterations than its steps say. The
// fix is CHAKRA_STEP_MARKER; this says when to reach for it (issue #38).
// Pure: an opaque id per optimizer in, at most one detection out.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace chakrashim::window {

class OptimizerPattern {
 public:
  struct Detection {
    std::uint64_t step = 0;        // the global step at which it became clear
    std::size_t optimizers = 0;    // distinct optimizers that stepped in turn so far
  };

  // One outermost optimizer step, global step `step`, by the optimizer
  // `id`. Returns the detection once: the first time an optimizer steps
  // again after another one stepped in between (A, B, A).
  //   A A A A      -> never (one optimizer)
  //   A A B B B    -> never (one replaced by another: a second phase)
  //   A B A        -> at the third step, {step, 2}
  std::optional<Detection> on_step(std::uint64_t id, std::uint64_t step);

  // One optimizer stepped once per parameter group (issue #54): a wrapper
  // that is no torch optimizer (DeepSpeed's ZeRO optimizers, when their
  // engine is not seen) sets the inner optimizer's param_groups to one
  // group, steps it, and goes on with the next. Fed at each outermost step
  // with an opaque id of the optimizer's first group at that moment (0:
  // unknown). Returns the step once: the first time one optimizer's first
  // group comes back to one it had before, having changed in between
  // (A:g0, A:g1, A:g0). A job that replaces its groups for good (g0, g1,
  // g1) is not told; nor two optimizers in turn, each with its own groups.
  // Watched over the job's first kGroupSteps outermost steps only: a
  // wrapper steps group by group from its first iteration, so its pattern
  // shows there (up to 255 groups), and reading an optimizer's groups at
  // every step cost a job about 900 instructions a step outside the window
  // for its whole life (issue #52).
  std::optional<std::uint64_t> on_groups(std::uint64_t id, std::uint64_t first_group, std::uint64_t step);
  bool groups_told() const { return groups_told_; }
  // Whether the groups at outermost step `step` are still worth reading.
  bool groups_watched(std::uint64_t step) const { return !groups_told_ && step < kGroupSteps; }
  static constexpr std::uint64_t kGroupSteps = 256;

 private:
  struct Groups {
    std::uint64_t optimizer = 0;
    std::uint64_t last = 0;               // its first group at its last step
    std::vector<std::uint64_t> earlier;  // the other first groups it had
  };
  std::vector<Groups> groups_;  // at most kRemembered optimizers
  bool groups_told_ = false;

  static constexpr std::size_t kRemembered = 16;  // a job has few optimizers
  std::vector<std::uint64_t> seen_;  // in order of first step
  std::uint64_t last_ = 0;
  bool any_ = false, told_ = false;
};

}  // namespace chakrashim::window
