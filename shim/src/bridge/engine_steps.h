// A DeepSpeed job's step is its engine's step (issue #54).
//
// DeepSpeed's ZeRO optimizers are not torch.optim optimizers: their step()
// calls the inner torch optimizer's step() once per parameter group (ZeRO-3:
// per sub-group), then gathers the updated weights. Counted by torch.optim's
// hooks, an iteration with two parameter groups was two steps, and each step
// ended inside DeepSpeed's step, before its gathers. So, where DeepSpeed is
// imported when the optimizer hooks go in, DeepSpeedEngine.step is wrapped
// (a small Python function in the class's dict, `__wrapped__` set): a call
// at a gradient-accumulation boundary (the engine's own
// is_gradient_accumulation_boundary(), or any call under
// managed_gradient_accumulation=false), which is the call that advances
// engine.global_steps, opens an outer step as an optimizer's would
// (OptimizerHooks::open_step), so the inner optimizer steps nest inside it
// and it alone counts, when engine.step() returns. While the RecordFunction
// step callback counts (inside the window) it also opens a USER_SCOPE record
// "Optimizer.step#DeepSpeedEngine.step" around the call, which that
// callback counts and where the window's boundary acts: the engine step's
// whole work is the step's optimizer phase, in both files.
//
// DeepSpeedEngine._take_model_step (always at a boundary) is wrapped the
// same way and nests inside step(); DeepSpeed's pipeline engine never calls
// step(): its PipelineEngine.train_batch() (one model step, and the loss
// aggregated after it) is wrapped as the step.
//
// Other calls (micro-batches between boundaries), and calls under
// torch.compiler.is_compiling(), go straight to DeepSpeed's. The wrapper
// neither raises nor catches anything of its own: an exception from the
// job's signal handler, or from DeepSpeed, reaches the job as it would; an
// outer step that an exception left open is dropped at the next one, by
// frame (as optimizer_hooks.h does).
#pragma once

#include <atomic>

namespace chakrashim::bridge {

class EngineSteps {
 public:
  // With the GIL, on a thread of ours (the optimizer hooks' registrar), once
  // the hooks are in: wraps DeepSpeedEngine.step if DeepSpeed is imported.
  // Never imports anything. Idempotent.
  static void install();
  // DeepSpeed's engine steps are counted (said once, at arm).
  static bool installed() { return installed_.load(std::memory_order_acquire); }

 private:
  static std::atomic<bool> installed_;
};

}  // namespace chakrashim::bridge
