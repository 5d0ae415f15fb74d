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

 private:
  static constexpr std::size_t kRemembered = 16;  // a job has few optimizers
  std::vector<std::uint64_t> seen_;  // in order of first step
  std::uint64_t last_ = 0;
  bool any_ = false, told_ = false;
};

}  // namespace chakrashim::window
